// Package pgtest gives tests a real PostgreSQL server and a fresh database
// per test.
//
// The server is TEAMKIT_TEST_POSTGRES when set (a URL whose role may CREATE
// DATABASE). Otherwise, when PostgreSQL's server binaries are installed
// (initdb and postgres, found on PATH or in /usr/lib/postgresql/*/bin), the
// first test that asks starts a throwaway cluster: in a temporary
// directory, on a free port of 127.0.0.1, with a random password, run as
// the "postgres" system user when the tests run as root (initdb and
// postgres refuse root). One cluster serves the whole test binary; Run
// stops it and removes its directory when the tests end, and it is killed
// with the test binary if that dies first. Otherwise the PostgreSQL tests
// skip, saying how to enable them — or fail, when CI=true.
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }
//	func TestX(t *testing.T) { url := pgtest.URL(t); … }
//
// Internal: a test kit; only tests import it, never a shipped binary.
package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	// Every test that gets a PostgreSQL URL here opens it with the
	// mailbox's PostgreSQL client, which the shipped inbox, stale and
	// ready leave out.
	_ "github.com/teamkit/teamkit/pkg/mailbox/pgdriver"
)

// EnvURL names the variable that points the tests at an existing server.
const EnvURL = "TEAMKIT_TEST_POSTGRES"

// Howto is the one line printed when the PostgreSQL tests cannot run.
const Howto = "PostgreSQL tests skipped: set " + EnvURL + "=postgres://USER:PASS@HOST/DB (a role that may CREATE DATABASE), or install the PostgreSQL server (Debian: apt-get install postgresql)"

var (
	startOnce sync.Once
	srv       *server
	startErr  error
	howtoOnce sync.Once
	dbSeq     atomic.Int64
)

// server is the PostgreSQL the tests use.
type server struct {
	base *url.URL // a URL of the server; the path names a database to administer from
	proc *exec.Cmd
	dir  string
	log  string
	exit chan struct{}
	// relaunch starts the postmaster again on the same port and data.
	relaunch func() (*server, error)
}

// TestingM is what Run needs of *testing.M.
type TestingM interface{ Run() int }

// Run runs the tests, then stops the cluster if one was started.
func Run(m TestingM) int {
	code := m.Run()
	Stop()
	return code
}

// Wrap returns m with Run stopping the cluster after the tests, for a
// harness (testscript.Main) that calls m.Run itself.
func Wrap(m TestingM) TestingM { return wrapped{m} }

type wrapped struct{ m TestingM }

func (w wrapped) Run() int { return Run(w.m) }

// Available reports whether a server can be had, starting the cluster if
// needed; err says why not.
func Available() error {
	startOnce.Do(func() { srv, startErr = start() })
	return startErr
}

// URL returns the URL of a fresh, empty database for t, with the password
// in it. When no server can be had, it skips t (fails it when CI=true).
func URL(t testing.TB) string {
	t.Helper()
	if err := Available(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("PostgreSQL is required when CI=true: %v", err)
		}
		howtoOnce.Do(func() { fmt.Fprintln(os.Stderr, "pgtest: "+Howto+" ("+err.Error()+")") })
		t.Skip(Howto)
	}
	u, drop, err := NewDatabase()
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(drop)
	return u
}

// NewDatabase creates a fresh database on the server (Available must have
// succeeded) and returns its URL and how to drop it: a no-op on the
// cluster this process started, which goes as a whole.
func NewDatabase() (dbURL string, drop func(), err error) {
	if err := Available(); err != nil {
		return "", nil, err
	}
	name := fmt.Sprintf("teamkit_test_%d_%d", os.Getpid(), dbSeq.Add(1))
	if err := srv.admin(fmt.Sprintf("CREATE DATABASE %s", name)); err != nil {
		return "", nil, fmt.Errorf("create database: %w", err)
	}
	drop = func() {}
	if srv.proc == nil { // someone else's server: leave it as found
		drop = func() { srv.admin(fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", name)) }
	}
	u := *srv.base
	u.Path = "/" + name
	return u.String(), drop, nil
}

func (s *server) admin(sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := pgx.Connect(ctx, s.base.String())
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	_, err = c.Exec(ctx, sql)
	return err
}

// Stop stops the cluster this process started, if any, and removes its
// directory. A server from TEAMKIT_TEST_POSTGRES is never touched.
func Stop() {
	if srv == nil || srv.proc == nil {
		return
	}
	srv.remove()
	srv = nil
}

// remove stops the server and removes its directory.
func (s *server) remove() {
	s.proc.Process.Signal(syscall.SIGINT) // fast shutdown
	select {
	case <-s.exit:
	case <-time.After(60 * time.Second):
		s.proc.Process.Kill()
		<-s.exit
	}
	os.RemoveAll(s.dir)
}

func start() (*server, error) {
	if u := os.Getenv(EnvURL); u != "" {
		base, err := url.Parse(u)
		if err != nil {
			return nil, fmt.Errorf("%s is not a URL", EnvURL)
		}
		s := &server{base: base}
		if err := s.admin("SELECT 1"); err != nil {
			return nil, fmt.Errorf("%s: %w", EnvURL, err)
		}
		return s, nil
	}
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	return startCluster(bin)
}

// binDir is where initdb and postgres are: PATH, else the newest Debian
// versioned directory, else the source install's default.
func binDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if _, err := exec.LookPath("postgres"); err == nil {
			return filepath.Dir(p), nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range append(dirs, "/usr/local/pgsql/bin") {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	return "", errors.New("no initdb and postgres found on PATH or in /usr/lib/postgresql/*/bin")
}

func version(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *server) ready() error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		select {
		case <-s.exit:
			return fmt.Errorf("postgres exited at start:\n%s", tail(s.log))
		default:
		}
		if err := s.admin("SELECT 1"); err == nil {
			return nil
		} else if time.Now().After(deadline) {
			return fmt.Errorf("postgres did not accept connections in 2 minutes: %v\n%s", err, tail(s.log))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	return string(bytes.Join(lines[max(0, len(lines)-20):], []byte("\n")))
}

// Password is the password in the URLs of the cluster this process
// started ("" for TEAMKIT_TEST_POSTGRES without one): tests check that it
// never appears in output.
func Password() string {
	if srv == nil {
		return ""
	}
	p, _ := srv.base.User.Password()
	return p
}

// Admin runs sql on the server as its administrative role (the one whose
// URL NewDatabase's URLs carry), for a test that needs roles or databases
// of its own. Available must have succeeded.
func Admin(sql string) error {
	if err := Available(); err != nil {
		return err
	}
	return srv.admin(sql)
}
