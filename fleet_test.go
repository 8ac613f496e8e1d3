//go:build linux

package teamkit_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/teamkit/teamkit/internal/command"
	"github.com/teamkit/teamkit/internal/command/commandtest"
	"github.com/teamkit/teamkit/internal/docgen"
)

// scriptEnviron is the script's environment as a list, for commands the
// harness starts itself: the variables Setup made, plus those a script may
// set later (extraVars), with their current values.
func scriptEnviron(ts *testscript.TestScript) []string {
	seen := map[string]bool{}
	var env []string
	keys := append([]string{}, extraVars...)
	for _, kv := range ts.Value(varsKey{}).([]string) {
		k, _, _ := strings.Cut(kv, "=")
		keys = append(keys, k)
	}
	for _, k := range keys {
		if seen[k] {
			continue
		}
		seen[k] = true
		if v := ts.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// scriptBin finds name on the script's PATH.
func scriptBin(ts *testscript.TestScript, name string) string {
	for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode()&0o111 != 0 {
			return p
		}
	}
	ts.Fatalf("%s not found on the script's PATH", name)
	return ""
}

// ptyCmd runs "pty [-stdin TEXT] cmd args…" with its stdout on a real
// pseudo-terminal (and its stdin too with -stdin, TEXT typed into it, \n
// and ^D as written), so the command sees a terminal exactly as at a
// person's shell. What the terminal received becomes the stdout to check
// (with the line discipline's CR before each newline removed; a CR the
// command wrote itself would have been escaped), its stderr the stderr.
func ptyCmd(ts *testscript.TestScript, neg bool, args []string) {
	typed, useStdin := "", false
	if len(args) > 1 && args[0] == "-stdin" {
		typed, useStdin, args = strings.NewReplacer(`\n`, "\n", `^D`, "\x04").Replace(args[1]), true, args[2:]
	}
	if len(args) == 0 {
		ts.Fatalf("usage: pty [-stdin TEXT] command [args...]")
	}
	master, slave, err := openPTY()
	if err != nil {
		ts.Fatalf("pty: %v", err)
	}
	defer master.Close()
	cmd := exec.Command(scriptBin(ts, args[0]), args[1:]...)
	cmd.Args[0] = args[0]
	cmd.Env = scriptEnviron(ts)
	cmd.Dir = ts.Getenv("WORK")
	cmd.Stdout = slave
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if useStdin {
		cmd.Stdin = slave
	}
	if err := cmd.Start(); err != nil {
		ts.Fatalf("pty: %v", err)
	}
	slave.Close()
	if typed != "" {
		master.Write([]byte(typed))
	}
	var out bytes.Buffer
	done := make(chan struct{})
	go func() { io.Copy(&out, master); close(done) }() // ends with EIO once the last writer is gone
	err = cmd.Wait()
	<-done
	fmt.Fprint(ts.Stdout(), strings.ReplaceAll(out.String(), "\r\n", "\n"))
	fmt.Fprint(ts.Stderr(), errb.String())
	var ee *exec.ExitError
	failed := err != nil
	if err != nil && !errors.As(err, &ee) {
		ts.Fatalf("pty: %v", err)
	}
	if failed != neg {
		ts.Fatalf("pty %s: exit error %v (negated: %v)", args[0], err, neg)
	}
}

// openPTY opens a pseudo-terminal pair with the Linux ioctls (no cgo, no
// dependency): unlock the master's slave, then open it by number.
func openPTY() (master, slave *os.File, err error) {
	master, err = os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		master.Close()
		return nil, nil, e
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		master.Close()
		return nil, nil, e
	}
	slave, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		master.Close()
		return nil, nil, err
	}
	return master, slave, nil
}

// The committed man pages and completions are what `make docs` makes from
// the commands' current definitions.
func TestGeneratedDocs(t *testing.T) {
	for name, app := range commands {
		docs, err := docgen.Docs(name, app)
		if err != nil {
			t.Fatal(err)
		}
		for path, want := range docs {
			got, err := os.ReadFile(path)
			if err != nil || string(got) != want {
				t.Errorf("%s is missing or out of date (%v): run make docs", path, err)
			}
		}
	}
}

// Every command and every verb has an example in its --help, and a usage
// line that names only what exists.
func TestHelpExamples(t *testing.T) {
	for name, app := range commands {
		helps := [][]string{{"--help"}}
		for _, verb := range command.ForDocs(app).VisibleCommands() {
			helps = append(helps, []string{verb.Name, "--help"})
		}
		for _, args := range helps {
			r := (&commandtest.Harness{T: t, App: app, Name: name}).Run(args...)
			help := r.Stdout
			if r.Code != 0 || !strings.Contains(help, "Example") {
				t.Errorf("%s %v: exit %d, no example in:\n%s%s", name, args, r.Code, help, r.Stderr)
			}
			if strings.Contains(help, "command [command options]") {
				t.Errorf("%s %v: the usage shows a command slot:\n%s", name, args, help)
			}
		}
	}
}
