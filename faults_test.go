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
	"path/filepath"
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
//	stalled start -stdin NAME …    start it with stdin a pipe nobody writes;
//	                               return once it is blocked reading it
//	stalled watching NAME          wait until it watches the mailbox for mail
//	                               (an inotify watch, or a LISTEN on PostgreSQL)
//	stalled signal NAME TERM|INT   send it a signal
//	stalled read NAME              read its pipe to the end (it unblocks) into
//	                               $WORK/NAME.out
//	stalled wait NAME STATUS       wait for it to exit with STATUS (a number, or
//	                               TERM|INT: killed by that signal); its stderr
//	                               becomes the script's stderr
//	stalled leased N               wait until N messages of $TEAMKIT_DB are leased
//	                               to a drain (claimed, not yet marked read)
type stalledProc struct {
	cmd    *exec.Cmd
	r      *os.File
	stdin  *os.File // the write end of -stdin's pipe, held open
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
		mode := "fill"
		if args[0] == "-nofill" || args[0] == "-stdin" {
			mode, args = args[0][1:], args[1:]
		}
		if len(args) < 2 {
			ts.Fatalf("usage: stalled start [-nofill|-stdin] NAME cmd args…")
		}
		startStalled(ts, procs, args[0], mode, args[1:])
		return
	}
	p := procs[args[0]]
	if p == nil {
		ts.Fatalf("stalled: no process %q", args[0])
	}
	switch verb {
	case "watching":
		waitWatching(ts, p)
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
		got := "0"
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			got = fmt.Sprint(ee.ExitCode())
			if ws := ee.Sys().(syscall.WaitStatus); ws.Signaled() {
				got = map[syscall.Signal]string{syscall.SIGTERM: "TERM", syscall.SIGINT: "INT"}[ws.Signal()]
			}
		} else if err != nil {
			ts.Fatalf("stalled wait: %v", err)
		}
		fmt.Fprint(ts.Stderr(), p.stderr.String())
		if want := args[1]; got != want {
			ts.Fatalf("%s exited %s, want %s", args[0], got, want)
		}
	default:
		ts.Fatalf("stalled: unknown verb %q", verb)
	}
}

func startStalled(ts *testscript.TestScript, procs map[string]*stalledProc, name string, mode string, args []string) {
	r, w, err := os.Pipe()
	ts.Check(err)
	p := &stalledProc{r: r, stderr: &syncBuffer{}, done: make(chan error, 1)}
	p.cmd = exec.Command(scriptBin(ts, args[0]), args[1:]...)
	p.cmd.Args[0] = args[0]
	p.cmd.Env = scriptEnviron(ts)
	p.cmd.Dir = ts.Getenv("WORK")
	p.cmd.Stdout, p.cmd.Stderr = w, p.stderr
	var in *os.File
	if mode == "stdin" {
		in, p.stdin, err = os.Pipe()
		ts.Check(err)
		p.cmd.Stdin = in
	}
	ts.Check(p.cmd.Start())
	w.Close()
	if in != nil {
		in.Close()
	}
	go func() { p.done <- p.cmd.Wait() }()
	procs[name] = p
	ts.Defer(func() {
		p.cmd.Process.Kill()
		r.Close()
		if p.stdin != nil {
			p.stdin.Close()
		}
		stalledMu.Lock()
		delete(stalledProcs, ts)
		stalledMu.Unlock()
	})
	switch mode {
	case "nofill":
		return
	case "stdin":
		// Blocked once one of its threads sits in read(0, …).
		reading := fmt.Sprintf("%d 0x0 ", syscall.SYS_READ)
		waitProc(ts, p, name+" blocked reading stdin", func() bool {
			tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/syscall", p.cmd.Process.Pid))
			for _, t := range tasks {
				if b, err := os.ReadFile(t); err == nil && strings.HasPrefix(string(b), reading) {
					return true
				}
			}
			return false
		})
		return
	}
	// Blocked for good once the pipe holds all it can.
	size, _, e := syscall.Syscall(syscall.SYS_FCNTL, r.Fd(), 1032 /* F_GETPIPE_SZ */, 0)
	if e != 0 {
		ts.Fatalf("F_GETPIPE_SZ: %v", e)
	}
	waitProc(ts, p, name+" blocked on its full pipe", func() bool {
		var n int32
		if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, r.Fd(), syscall.TIOCINQ, uintptr(unsafe.Pointer(&n))); e != 0 {
			ts.Fatalf("FIONREAD: %v", e)
		}
		return int(n) >= int(size)
	})
}

// waitProc polls cond until it holds, failing the script if p exits first
// or waitLimit passes.
func waitProc(ts *testscript.TestScript, p *stalledProc, what string, cond func() bool) {
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		select {
		case err := <-p.done:
			p.done <- err
			ts.Fatalf("stalled: exited (%v) before %s: %s", err, what, p.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			ts.Fatalf("stalled: not %s after %s", what, waitLimit)
		}
		time.Sleep(pollEvery)
	}
}

// pgListening matches, in pg_stat_activity, a session that listens: its
// last statement is its LISTEN or, for a waiter on an inbox, its look
// between waits (inboxLook), which follows at once.
const pgListening = `(query LIKE 'LISTEN %' OR query LIKE 'SELECT count(*), min(CASE WHEN lease_until%')`

// waitWatching waits until p watches the mailbox for mail: on SQLite an
// inotify watch among its descriptors, on PostgreSQL a session of its
// database listening (other tests share the server).
func waitWatching(ts *testscript.TestScript, p *stalledProc) {
	path := ts.Getenv("TEAMKIT_DB")
	if sqlDriver(path) == "sqlite" {
		waitProc(ts, p, "watching (inotify)", func() bool {
			infos, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fdinfo/*", p.cmd.Process.Pid))
			for _, f := range infos {
				if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), "inotify wd:") {
					return true
				}
			}
			return false
		})
		return
	}
	db, err := openScriptDB(path)
	ts.Check(err)
	defer db.Close()
	waitProc(ts, p, "watching (LISTEN)", func() bool {
		var n int
		ts.Check(db.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND ` + pgListening).Scan(&n))
		return n > 0
	})
}

func waitLeased(ts *testscript.TestScript, want string) {
	path := ts.Getenv("TEAMKIT_DB")
	db, err := openScriptDB(path)
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
	// Every page into the file first: a checkpoint that another
	// connection holds back (a supervisor still recording) leaves
	// the table's page in the WAL, where readers find it whole, and a later
	// checkpoint writes it back over the garbage.
	for deadline := time.Now().Add(waitLimit); ; time.Sleep(pollEvery) {
		var busy, logged, done int64
		err := db.QueryRow(`PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logged, &done)
		if err != nil && !strings.Contains(err.Error(), "SQLITE_BUSY") {
			ts.Fatalf("corrupt: %v", err)
		}
		if err == nil && busy == 0 {
			break
		}
		if time.Now().After(deadline) {
			ts.Fatalf("corrupt: the WAL still not checkpointed after %s", waitLimit)
		}
	}
	ts.Check(db.QueryRow(`SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = ?`, args[1]).Scan(&root))
	ts.Check(db.QueryRow(`PRAGMA page_size`).Scan(&size))
	ts.Check(db.Close())
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	ts.Check(err)
	_, err = f.WriteAt(bytes.Repeat([]byte{0xff}, int(size)), (root-1)*size)
	ts.Check(err)
	ts.Check(f.Close())
}

// dbExec runs "dbexec SQL" on the script's mailbox (TEAMKIT_DB), as any
// program that can write it might: rows no teamkit command would write.
func dbExec(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: dbexec SQL")
	}
	db, err := openScriptDB(ts.Getenv("TEAMKIT_DB"))
	ts.Check(err)
	defer db.Close()
	_, err = db.Exec(args[0])
	ts.Check(err)
}

// sqlDriver is the database/sql driver for a script's TEAMKIT_DB.
func sqlDriver(db string) string {
	if strings.HasPrefix(db, "postgres") {
		return "pgx"
	}
	return "sqlite"
}

// openScriptDB opens a script's TEAMKIT_DB with database/sql, as another
// program beside teamkit's commands would. On SQLite it waits up to 10 s
// for the team's writers: without a busy timeout a statement that writes
// fails at once with SQLITE_BUSY while a supervisor or guard records a run.
func openScriptDB(db string) (*sql.DB, error) {
	if sqlDriver(db) == "pgx" {
		return sql.Open("pgx", db)
	}
	return sql.Open("sqlite", "file:"+db+"?_busy_timeout=10000")
}
