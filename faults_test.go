//go:build linux

package teamkit_test

import (
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, for TEAMKIT_DB a PostgreSQL URL
	"github.com/rogpeppe/go-internal/testscript"
)

// A stalled reader, for scripts: a command whose stdout is a pipe nobody
// reads until the script says so.
//
//	stalled start NAME cmd args…   start it; return once it is blocked on a full pipe
//	stalled start -nofill NAME …   start it; return at once
//	stalled signal NAME TERM|INT   send it a signal
//	stalled read NAME              read its pipe to the end (it unblocks) into
//	                               $WORK/NAME.out
//	stalled wait NAME STATUS       wait for it to exit with STATUS; its stderr
//	                               becomes the script's stderr
//	stalled leased N               wait until N messages of $TEAMKIT_DB are leased
//	                               to a drain (claimed, not yet marked read)
type stalledProc struct {
	cmd    *exec.Cmd
	r      *os.File
	stderr *syncBuffer
	done   chan error
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

var (
	stalledMu    sync.Mutex
	stalledProcs = map[*testscript.TestScript]map[string]*stalledProc{}
)

func stalled(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: stalled start|signal|read|wait NAME …")
	}
	stalledMu.Lock()
	procs := stalledProcs[ts]
	if procs == nil {
		procs = map[string]*stalledProc{}
		stalledProcs[ts] = procs
	}
	stalledMu.Unlock()
	verb, args := args[0], args[1:]
	if verb == "leased" {
		waitLeased(ts, args[0])
		return
	}
	if verb == "start" {
		fill := true
		if args[0] == "-nofill" {
			fill, args = false, args[1:]
		}
		if len(args) < 2 {
			ts.Fatalf("usage: stalled start [-nofill] NAME cmd args…")
		}
		startStalled(ts, procs, args[0], fill, args[1:])
		return
	}
	p := procs[args[0]]
	if p == nil {
		ts.Fatalf("stalled: no process %q", args[0])
	}
	switch verb {
	case "signal":
		sig := map[string]os.Signal{"TERM": syscall.SIGTERM, "INT": os.Interrupt}[args[1]]
		if len(args) != 2 || sig == nil {
			ts.Fatalf("usage: stalled signal NAME TERM|INT")
		}
		ts.Check(p.cmd.Process.Signal(sig))
	case "read":
		f, err := os.Create(ts.MkAbs(args[0] + ".out"))
		ts.Check(err)
		defer f.Close()
		if _, err := io.Copy(f, p.r); err != nil {
			ts.Fatalf("stalled read: %v", err)
		}
	case "wait":
		if len(args) != 2 {
			ts.Fatalf("usage: stalled wait NAME STATUS")
		}
		var err error
		select {
		case err = <-p.done:
		case <-time.After(waitLimit):
			ts.Fatalf("stalled: %s still running after %s", args[0], waitLimit)
		}
		got := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			got = ee.ExitCode()
		} else if err != nil {
			ts.Fatalf("stalled wait: %v", err)
		}
		fmt.Fprint(ts.Stderr(), p.stderr.String())
		if want := args[1]; fmt.Sprint(got) != want {
			ts.Fatalf("%s exited %d, want %s", args[0], got, want)
		}
	default:
		ts.Fatalf("stalled: unknown verb %q", verb)
	}
}

func startStalled(ts *testscript.TestScript, procs map[string]*stalledProc, name string, fill bool, args []string) {
	r, w, err := os.Pipe()
	ts.Check(err)
	p := &stalledProc{r: r, stderr: &syncBuffer{}, done: make(chan error, 1)}
	p.cmd = exec.Command(scriptBin(ts, args[0]), args[1:]...)
	p.cmd.Args[0] = args[0]
	p.cmd.Env = scriptEnviron(ts)
	p.cmd.Dir = ts.Getenv("WORK")
	p.cmd.Stdout, p.cmd.Stderr = w, p.stderr
	ts.Check(p.cmd.Start())
	w.Close()
	go func() { p.done <- p.cmd.Wait() }()
	procs[name] = p
	ts.Defer(func() {
		p.cmd.Process.Kill()
		r.Close()
		stalledMu.Lock()
		delete(stalledProcs, ts)
		stalledMu.Unlock()
	})
	if !fill {
		return
	}
	// Blocked for good once the pipe holds all it can.
	size, _, e := syscall.Syscall(syscall.SYS_FCNTL, r.Fd(), 1032 /* F_GETPIPE_SZ */, 0)
	if e != 0 {
		ts.Fatalf("F_GETPIPE_SZ: %v", e)
	}
	deadline := time.Now().Add(waitLimit)
	for {
		var n int32
		if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, r.Fd(), syscall.TIOCINQ, uintptr(unsafe.Pointer(&n))); e != 0 {
			ts.Fatalf("FIONREAD: %v", e)
		}
		if int(n) >= int(size) {
			return
		}
		select {
		case err := <-p.done:
			p.done <- err
			ts.Fatalf("stalled: %s exited (%v) before filling its pipe: %s", name, err, p.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			ts.Fatalf("stalled: %s wrote %d bytes of %d in %s", name, n, size, waitLimit)
		}
		time.Sleep(pollEvery)
	}
}

func waitLeased(ts *testscript.TestScript, want string) {
	path := ts.Getenv("TEAMKIT_DB")
	db, err := sql.Open(sqlDriver(path), path)
	ts.Check(err)
	defer db.Close()
	deadline := time.Now().Add(waitLimit)
	for {
		var n int
		ts.Check(db.QueryRow(`SELECT count(*) FROM messages WHERE claim_token IS NOT NULL`).Scan(&n))
		if fmt.Sprint(n) == want {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("stalled: %d messages leased after %s, want %s", n, waitLimit, want)
		}
		time.Sleep(pollEvery)
	}
}

// corruptTable runs "corrupt DB TABLE": it overwrites the root page of
// TABLE in the SQLite file DB with garbage, leaving its indexes intact —
// what a bad sector under the table looks like to a query that reads only
// an index.
func corruptTable(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: corrupt DB TABLE")
	}
	path := ts.MkAbs(args[0])
	db, err := sql.Open("sqlite", path)
	ts.Check(err)
	var root, size int64
	_, err = db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
	ts.Check(err)
	ts.Check(db.QueryRow(`SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = ?`, args[1]).Scan(&root))
	ts.Check(db.QueryRow(`PRAGMA page_size`).Scan(&size))
	ts.Check(db.Close())
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	ts.Check(err)
	_, err = f.WriteAt(bytes.Repeat([]byte{0xff}, int(size)), (root-1)*size)
	ts.Check(err)
	ts.Check(f.Close())
}

// sqlDriver is the database/sql driver for a script's TEAMKIT_DB.
func sqlDriver(db string) string {
	if strings.HasPrefix(db, "postgres") {
		return "pgx"
	}
	return "sqlite"
}
