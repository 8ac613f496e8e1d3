package launch

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/teamkit/teamkit/pkg/runstream"
)

// TestLastEvent: a run's last event is the latest of its start, its log's
// last write and its stream's last line.
func TestLastEvent(t *testing.T) {
	dir := t.TempDir()
	spec := Spec{Output: runstream.Claude, Log: filepath.Join(dir, "r1.log")}
	started := time.Now().Add(-time.Hour).Truncate(time.Second)
	if got := lastEvent(spec, started, nil); !got.Equal(started) {
		t.Fatalf("no log, no stream: %v, want the start %v", got, started)
	}
	// A line of output, 10 minutes after the start.
	if err := os.WriteFile(spec.Log, []byte("working\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	line := started.Add(10 * time.Minute)
	if err := os.Chtimes(spec.Log, line, line); err != nil {
		t.Fatal(err)
	}
	if got := lastEvent(spec, started, nil); !got.Equal(line) {
		t.Fatalf("with a line of output: %v, want its time %v", got, line)
	}
	// A stream event that writes no text still counts.
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	s := readStream(spec, pr, io.Discard)
	before := time.Now()
	pw.Write([]byte(`{"type":"system","subtype":"init","session_id":"s1","model":"claude"}` + "\n"))
	pw.Close()
	<-s.done
	pr.Close()
	if got := lastEvent(spec, started, s); got.Before(before) {
		t.Fatalf("after a stream event at %v: %v", before, got)
	}
	// Nothing goes before the start.
	if err := os.Chtimes(spec.Log, started.Add(-time.Hour), started.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got := lastEvent(spec, started, nil); !got.Equal(started) {
		t.Fatalf("a log older than the run: %v, want the start", got)
	}
}
