package launch

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/runstream"
)

// maxStreamLine bounds one line of a CLI's stream held in memory; what a
// longer line holds past it is dropped (a huge tool output in one event).
const maxStreamLine = 4 << 20

// stream reads the agent's structured output (Spec.Output) as it comes:
// the readable lines go where the agent's output would have gone (the log,
// or the tmux pane, whose output is piped into the log), the raw lines to
// StreamPath beside the log, and the events into a runstream.Reader.
type stream struct {
	mu sync.Mutex
	r  *runstream.Reader
	// last is when the stream's last line came (see lastEvent).
	last time.Time
	done chan struct{}
	// fatal is closed when the stream reports a failure no retry can
	// mend (runstream.Failure.Fatal): the supervisor stops the run.
	fatal     chan struct{}
	fatalOnce sync.Once
	// budget is the run's (Spec.Budget); over is closed when the stream
	// reports it reached (see budget.go).
	budget   mailbox.Budget
	over     chan struct{}
	overOnce sync.Once
	// quoted counts the text lines the stream wrote to the log that read
	// like a CLI's stderr saying its session is gone (the model's words, a
	// command's output): stderrAtEnd passes them by.
	quoted map[string]int
}

// StreamPath is where the raw stream of the run whose log is log is kept:
// "<run>.stream.jsonl" beside "<run>.log".
func StreamPath(log string) string { return strings.TrimSuffix(log, ".log") + ".stream.jsonl" }

// readStream starts reading src; text receives the readable lines.
func readStream(spec Spec, src io.Reader, text io.Writer) *stream {
	s := &stream{r: runstream.New(spec.Output, nil), done: make(chan struct{}), fatal: make(chan struct{}),
		budget: spec.Budget, over: make(chan struct{})}
	s.r.Base = runstream.Tokens(spec.SessionBase)
	var f *os.File
	var raw io.Writer = io.Discard
	if spec.Log != "" {
		var err error
		if f, err = os.OpenFile(StreamPath(spec.Log), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); err == nil {
			raw = f
		} else {
			note(spec, "the raw stream is not kept: %v", err)
		}
	}
	go func() {
		defer close(s.done)
		s.copy(src, raw, text)
		if f != nil {
			f.Close()
		}
	}()
	return s
}

// wait waits up to patience for the stream to end (the agent's processes
// to close it), and reports whether it did.
func (s *stream) wait(patience time.Duration) bool {
	select {
	case <-s.done:
		return true
	case <-time.After(patience):
		return false
	}
}

// fill completes rec with what the stream said: the session, tokens, cost,
// and, for a run that ended on a failure, the failure.
func (s *stream) fill(rec *mailbox.RunRecord, code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec.Session, rec.Tokens = s.r.Session, mailbox.Tokens(s.r.Tokens)
	if s.r.CostUSD != nil {
		c := *s.r.CostUSD
		rec.CostUSD = &c
	}
	rec.End, rec.Detail = s.r.End(code)
	if f := s.r.Failure; f != nil {
		rec.ResetsAt = f.ResetsAt
	}
}

// stderrTail is how much of the log's end stderrAtEnd reads.
const stderrTail = 8 << 10

// stderrAtEnd reads the end of the run's log, where the CLI's standard
// error went, for a failure its stream did not carry (codex says only there
// that the session it was to resume is gone: runstream.Reader.Stderr). It
// reads only when the run failed and its stream said nothing of why.
func (s *stream) stderrAtEnd(log string, code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if code == 0 || log == "" || s.r.Failure != nil {
		return
	}
	f, err := os.Open(log)
	if err != nil {
		return
	}
	defer f.Close()
	buf := make([]byte, stderrTail)
	n, _ := f.ReadAt(buf, 0)
	if st, err := f.Stat(); err == nil && st.Size() > stderrTail {
		n, _ = f.ReadAt(buf, st.Size()-stderrTail)
	}
	for _, l := range strings.Split(string(buf[:n]), "\n") {
		if k := strings.TrimSpace(l); s.quoted[k] > 0 {
			s.quoted[k]--
			continue
		}
		s.r.Stderr(l)
	}
}

// wrote notes the text lines the stream writes that stderrAtEnd must not
// take for the CLI's own; s.mu is held.
func (s *stream) wrote(lines []string) {
	for _, l := range lines {
		if runstream.SessionGone(l) {
			if s.quoted == nil {
				s.quoted = map[string]int{}
			}
			s.quoted[strings.TrimSpace(l)]++
		}
	}
}

// recordRun stores the run's record, retried like the run's end, and
// reports whether it and the park its end implies were recorded; what
// cannot be written is noted in the log.
func recordRun(db *mailbox.DB, spec Spec, rec mailbox.RunRecord) bool {
	err := Retry(EndPatience, func(ctx context.Context) error { return db.RecordRun(ctx, rec) })
	if err != nil {
		note(spec, "could not record the run: %v", err)
		return false
	}
	if rec.End == "" {
		return true
	}
	// The end parks the agent, or counts toward failing (mailbox.SettleEnd).
	err = Retry(EndPatience, func(ctx context.Context) error {
		return db.SettleEnd(ctx, rec.Team, rec.Name, rec.Run, rec.End, rec.ResetsAt)
	})
	if err != nil {
		note(spec, "could not record the agent's park: %v", err)
	}
	return err == nil
}

func (s *stream) copy(src io.Reader, raw, text io.Writer) {
	br := bufio.NewReaderSize(src, 64<<10)
	var line []byte
	var out bytes.Buffer
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) <= maxStreamLine {
			line = append(line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && len(line) == 0 {
			// The stream ended after a whole line: what the reader still
			// holds (text not yet followed by an event) goes to the log too.
			s.mu.Lock()
			rest := s.r.Flush()
			s.wrote(rest)
			s.mu.Unlock()
			for _, l := range rest {
				text.Write([]byte(l + "\n"))
			}
			return
		}
		if len(line) > 0 {
			raw.Write(line)
			if line[len(line)-1] != '\n' {
				raw.Write([]byte{'\n'})
			}
			s.mu.Lock()
			s.last = time.Now()
			lines := s.r.Line(line)
			if err != nil {
				lines = append(lines, s.r.Flush()...)
			}
			s.wrote(lines)
			fatal := s.r.Failure.Fatal()
			_, over := s.reached()
			s.mu.Unlock()
			out.Reset()
			for _, l := range lines {
				out.WriteString(l)
				// In tmux the pane's terminal turns it into "\r\n", as it
				// did for the CLI's own output.
				out.WriteByte('\n')
			}
			text.Write(out.Bytes())
			if fatal {
				s.fatalOnce.Do(func() { close(s.fatal) })
			}
			if over {
				s.overOnce.Do(func() { close(s.over) })
			}
			line = line[:0]
		}
		if err != nil {
			return
		}
	}
}
