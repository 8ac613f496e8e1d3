//go:build linux

package teamkit_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Targets are the platforms teamkit is built for (make release).
var Targets = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64", "freebsd/amd64"}

// TestCrossBuild builds the commands and vets every package, tests
// included, for every target: a Linux-only call in code that all platforms
// share fails here. (go vet type-checks every package and its tests; go
// build links the six commands, with make release's tags, stripped: the
// link is what is checked, and DWARF for binaries thrown away would double
// its cost.) The host's own target is vetted by make test's go vet ./...
// already, and only built here.
func TestCrossBuild(t *testing.T) {
	t.Parallel()
	for _, target := range Targets {
		goos, goarch, _ := strings.Cut(target, "/")
		t.Run(strings.ReplaceAll(target, "/", "_"), func(t *testing.T) {
			t.Parallel()
			steps := [][]string{{"build", "-tags", buildTags, "-ldflags", "-s -w", "-o", t.TempDir(), "./cmd/..."}, {"vet", "./..."}}
			if goos == runtime.GOOS && goarch == runtime.GOARCH {
				steps = steps[:1]
			}
			for _, args := range steps {
				cmd := exec.Command("go", args...)
				cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0")
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("GOOS=%s GOARCH=%s go %s: %v\n%s", goos, goarch, strings.Join(args, " "), err, out)
				}
			}
		})
	}
}

// boundedCommand is exec.Command for a command a test waits on that could
// hang: a process under Wine, a spawn with faults injected. It is killed
// after commandLimit, and its output pipes are let go waitDelay after it
// ends (a process it left running would hold them open), so a hang fails
// its test with what it printed, where it would hold make test until go
// test's -timeout.
func boundedCommand(t *testing.T, name string, args ...string) *exec.Cmd {
	ctx, cancel := context.WithTimeout(context.Background(), commandLimit)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.WaitDelay = waitDelay
	return cmd
}

const (
	commandLimit = 10 * time.Minute
	waitDelay    = 30 * time.Second
)

// TestWindowsUnderWine runs the Windows build under Wine (Debian's wine64
// 8.0, with the ProcessPrng shim of scripts/wine installed in a prefix of
// its own): the process layer's unit tests (Job Objects, identities); the
// mailbox commands on a mailbox at a path with spaces and non-ASCII; spawn,
// spawn list and spawn stop of a handshake agent (testdata/wineagent) and
// the child it starts, launched in the background, in a console window
// (launch=console) and in a Windows Terminal tab (launch=wt, through the
// stand-in wt.exe of testdata/winterminal), and the error without wt.exe;
// and a briefing full of cmd.exe's metacharacters
// delivered byte for byte to a .cmd agent on stdin, and refused as argv.
// Each wine start costs seconds, so the scenario is small.
//
// Where Wine is not Windows: Wine maps the Unix filesystem to drive Z:, so
// the mailbox path is given as Z:\…; Wine's console is not a real one, so
// CTRL_BREAK may not reach the agent under Wine, and TestTree accepts the
// TerminateJobObject end that follows it after the grace.
func TestWindowsUnderWine(t *testing.T) {
	t.Parallel()
	wine, err := exec.LookPath("wine")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but wine is missing (.ci/run installs wine64 and gcc-mingw-w64-x86-64-win32)")
		}
		t.Skip("Windows tests skipped: install wine64 and gcc-mingw-w64-x86-64-win32 (Debian) to run them")
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	prefix := filepath.Join(cache, "teamkit", "wine")
	if out, err := boundedCommand(t, "sh", "scripts/wine/prefix.sh", prefix).CombinedOutput(); err != nil {
		t.Fatalf("make the wine prefix: %v\n%s", err, out)
	}
	env := append(os.Environ(), "WINEPREFIX="+prefix, "WINEDEBUG=-all")

	// The process layer's own tests, launch's PATHEXT lookup, and the
	// tests of what differs on Windows elsewhere (named ...Windows), as
	// Windows binaries.
	gotest := boundedCommand(t, "go", "test", "-count=1", "-exec", wine, "./pkg/proc/")
	lookpath := boundedCommand(t, "go", "test", "-count=1", "-exec", wine, "-run", "^TestLookPath$|Windows", "./pkg/launch/", "./pkg/agenttype/", "./pkg/spawn/")
	lookpath.Env = append(env, "GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0")
	if out, err := combinedToFile(t, lookpath); err != nil {
		t.Fatalf("GOOS=windows go test -exec wine -run '^TestLookPath$|Windows' ./pkg/launch/ ./pkg/agenttype/ ./pkg/spawn/: %v\n%s", err, out)
	}
	gotest.Env = append(env, "GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0")
	if out, err := combinedToFile(t, gotest); err != nil {
		t.Fatalf("GOOS=windows go test -exec wine ./pkg/proc/: %v\n%s", err, out)
	}

	bin, wtBin := t.TempDir(), t.TempDir()
	for _, c := range []string{"cmd/inbox", "cmd/stale", "cmd/ready", "cmd/spawn", "testdata/wineagent", "testdata/winterminal"} {
		exe := filepath.Join(bin, filepath.Base(c)+".exe")
		if c == "testdata/winterminal" {
			exe = filepath.Join(wtBin, "wt.exe")
		}
		build := exec.Command("go", "build", "-o", exe, "./"+c)
		build.Env = append(os.Environ(), "GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("build %s.exe: %v\n%s", c, err, out)
		}
	}
	dir := filepath.Join(t.TempDir(), "José Q", "mail box")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	db := winPath(filepath.Join(dir, "team.db"))
	work, types := t.TempDir(), t.TempDir()
	env = append(env, "TEAMKIT_TYPES="+winPath(types))
	// runExe runs exe under wine with env and the scenario's mailbox, and
	// wants exit code want; run runs one of the commands built in bin with
	// the scenario's env.
	runExe := func(env []string, exe string, want int, args ...string) string {
		t.Helper()
		cmd := boundedCommand(t, wine, append([]string{exe}, append(args, "--db", db)...)...)
		cmd.Env, cmd.Dir = env, work
		out, err := combinedToFile(t, cmd)
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != want {
			t.Fatalf("wine %s %v: exit %d, want %d\n%s", filepath.Base(exe), args, code, want, out)
		}
		return strings.ReplaceAll(string(out), "\r\n", "\n")
	}
	run := func(want int, c string, args ...string) string {
		t.Helper()
		return runExe(env, filepath.Join(bin, c+".exe"), want, args...)
	}
	if out := run(0, "inbox", "send", "demo", "w1", "héllo wörker", "--from", "lead"); !strings.Contains(out, "id=1") {
		t.Fatalf("send printed %q", out)
	}
	if out := run(2, "stale", "demo", "--min", "0"); !strings.Contains(out, "héllo wörker") {
		t.Fatalf("stale printed %q", out)
	}
	if out := run(0, "inbox", "drain", "demo", "w1"); !strings.Contains(out, "héllo wörker") {
		t.Fatalf("drain printed %q", out)
	}
	run(0, "stale", "demo", "--min", "0")
	run(2, "ready", "check", "demo", "w1", "--run", "run-1")
	if out := run(0, "ready", "mark", "demo", "w1", "--run", "run-1"); !strings.Contains(out, "ready=marked") {
		t.Fatalf("ready mark printed %q", out)
	}
	run(0, "ready", "check", "demo", "w1", "--run", "run-1")
	if _, err := os.Stat(filepath.Join(dir, "team.db")); err != nil {
		t.Fatalf("the mailbox is not where --db put it: %v", err)
	}

	// spawn, through a handshake type whose agent is a Windows program
	// that starts a child, marks ready and sends the lead a reply. The
	// child appends to beat while it lives.
	t.Cleanup(func() {
		// A failure before spawn stop leaves the agent running, and
		// the prefix's wine processes with it: end them all.
		if t.Failed() {
			kill := boundedCommand(t, "wineserver", "-k")
			kill.Env = env
			_ = kill.Run()
		}
	})
	// handshake spawns agent name of a type launched by launch (with
	// spawnExe and env), a Windows program that starts a child, replies
	// and marks ready; checks the reply, spawn list, and that the agent's
	// output reached the run's log; then stops it and checks that the
	// agent and its child are gone (the Job Object).
	agentExe := "Z:" + filepath.Join(bin, "wineagent.exe")
	handshake := func(launch, name string, env []string, spawnExe string) {
		t.Helper()
		typ := "win" + launch
		beat := filepath.Join(work, "beat-"+name)
		writeType(t, types, typ, "command="+agentExe+" agent Z:"+beat+"\nboot=stdin\nhandshake=actas\nlaunch="+launch+"\n", `{{template "teamkit" .}}`)
		out := runExe(env, spawnExe, 0, typ, name, "--team", "demo", "--timeout", "5m")
		if !strings.Contains(out, "status=ready ") {
			t.Fatalf("spawn %s printed %q", typ, out)
		}
		waitUntil(t, "the agent's child to beat", func() bool {
			st, err := os.Stat(beat)
			return err == nil && st.Size() > 2
		})
		if ps := wineProcs(beat); len(ps) != 2 {
			t.Fatalf("want the agent and its child running, found %q", ps)
		}
		if out := run(0, "inbox", "drain", "demo", "lead"); !strings.Contains(out, "reply from "+name) {
			t.Fatalf("drain lead printed %q", out)
		}
		if out := run(0, "spawn", "list", "demo"); !regexp.MustCompile(`(?m)^` + name + ` +` + typ + ` +ready +\d+ `).MatchString(out) {
			t.Fatalf("spawn list printed %q", out)
		}
		// What the agent printed (ready's own line) is in the log spawn
		// reads, whatever the launcher did with the agent's output.
		m := regexp.MustCompile(`log="(Z:[^"]+)"`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no log in %q", out)
		}
		log := strings.ReplaceAll(strings.TrimPrefix(strings.ReplaceAll(m[1], `\\`, `\`), "Z:"), `\`, "/")
		if b, err := os.ReadFile(log); err != nil || !strings.Contains(string(b), "ready=marked team=demo name="+name) {
			t.Fatalf("the agent's output is not in its log %s (%v):\n%s", log, err, b)
		}
		// Where Wine is not Windows: the CTRL_BREAK spawn stop sends
		// first does not end the agent under Wine (its console is not a
		// real one), so the agent outlives the grace and
		// TerminateJobObject ends it and its child: code=137, the forced
		// end, is what Wine tests. On Windows, Go's default CTRL_BREAK
		// handling would end the agent before the grace. Either way the
		// child must go with it: the Job Object.
		if out := run(0, "spawn", "stop", "demo", name, "--grace", "1s"); !regexp.MustCompile(`(?m)^status=stopped agent=` + name + ` team=demo run=\S+ code=137$`).MatchString(out) {
			t.Fatalf("spawn stop printed %q", out)
		}
		waitUntil(t, "the agent and its child to end", func() bool { return len(wineProcs(beat)) == 0 })
		if out := run(0, "spawn", "list", "demo"); !regexp.MustCompile(`(?m)^` + name + ` +` + typ + ` +exited code=\d+ `).MatchString(out) {
			t.Fatalf("spawn list after stop printed %q", out)
		}
	}
	spawnExe := filepath.Join(bin, "spawn.exe")
	handshake("background", "a1", env, spawnExe)

	// launch=console: the supervisor in a console window of its own,
	// copying the agent's output to it and to the log. Where Wine is not
	// Windows: with no display, Wine gives a new console no screen buffer
	// (measured: CONOUT$ opens, but a write to it fails with "I/O
	// operation aborted" and GetConsoleScreenBufferInfo with "Invalid
	// handle"), so what the window would show cannot be read here. What
	// is tested: the run starts in a new console, is listed, is stopped
	// with its child, and its output reaches the log even though every
	// write to the console fails. (The supervisor's own output is the log
	// in this mode, so the copy to the log is proved by the wt run below,
	// whose supervisor's output goes nowhere.)
	handshake("console", "c1", env, spawnExe)

	// launch=wt: a tab of the stand-in wt.exe (testdata/winterminal), which
	// reads wt.exe's argv as Windows Terminal does and starts the tab's
	// command line in a console of its own. spawn.exe runs from a
	// directory whose name holds a ";", which wt.exe would split its
	// command line on unless escaped.
	semi := filepath.Join(t.TempDir(), "tools;old")
	if err := os.MkdirAll(semi, 0o700); err != nil {
		t.Fatal(err)
	}
	exe, err := os.ReadFile(spawnExe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(semi, "spawn.exe"), exe, 0o700); err != nil {
		t.Fatal(err)
	}
	wtEnv := append(env[:len(env):len(env)], "WINEPATH="+winPath(wtBin))
	handshake("wt", "w1", wtEnv, filepath.Join(semi, "spawn.exe"))
	tab, err := os.ReadFile(filepath.Join(wtBin, "wt.log"))
	want := "window=teamkit title=demo/w1 commandline=" + winPath(filepath.Join(semi, "spawn.exe")) + " __run "
	if err != nil || !strings.HasPrefix(string(tab), want) || strings.Count(string(tab), "\n") != 1 {
		t.Fatalf("wt.exe was asked for %q (%v), want one tab: %q…", tab, err, want)
	}
	// Without wt.exe on PATH: refused at once, with a hint.
	if out := run(1, "spawn", "winwt", "w2", "--team", "demo"); !strings.Contains(out, "spawn: error: this type launches in Windows Terminal, but wt.exe is not on PATH") ||
		!strings.Contains(out, "spawn: hint: install Windows Terminal, or use a type with launch=console or launch=background") {
		t.Fatalf("spawn without wt.exe printed %q", out)
	}

	// A briefing with every character cmd.exe reads, newlines and
	// non-ASCII, handed to a .cmd agent on stdin, arrives byte for byte;
	// the same briefing as an argv to the .cmd is refused before launch.
	brief := "100% ^caret^ !bang! a & b | c < d > e \"quoted\" %PATH% \r\nline two\ttab\nJosé Q — 日本語 ✓\n"
	if err := os.WriteFile(filepath.Join(work, "task.txt"), []byte(brief), 0o600); err != nil {
		t.Fatal(err)
	}
	shim := filepath.Join(bin, "brief agent.cmd")
	if err := os.WriteFile(shim, []byte("@echo off\r\n\""+winPath(filepath.Join(bin, "wineagent.exe"))+"\" brief got.md\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tmpl := `{{.Task}}{{"" -}}`
	writeType(t, types, "cmdstdin", "command=\""+"Z:"+shim+"\"\nboot=stdin\nhandshake=actas\n", tmpl)
	writeType(t, types, "cmdargv", "command=\""+"Z:"+shim+"\" {prompt}\nhandshake=actas\n", tmpl)
	if out := run(0, "spawn", "cmdstdin", "b1", "--team", "demo", "--task-file", "task.txt", "--timeout", "5m"); !strings.Contains(out, "status=ready ") {
		t.Fatalf("spawn cmdstdin printed %q", out)
	}
	if got, err := os.ReadFile(filepath.Join(work, "got.md")); err != nil || string(got) != brief {
		t.Fatalf("the .cmd agent got %q (%v), want %q", got, err, brief)
	}
	if out := run(1, "spawn", "cmdargv", "b2", "--team", "demo", "--task-file", "task.txt"); !strings.Contains(out, "is a batch file, which cmd.exe parses") {
		t.Fatalf("spawn cmdargv printed %q", out)
	}
}

// combinedToFile runs cmd with its output and errors in a file, and
// returns what it wrote. A file, not a pipe: Wine hands its own Unix
// stderr to every process it starts, whatever the Windows handles say, so
// wineserver, and any Windows process left running (the agent spawn leaves
// running), would hold a pipe open past cmd's end.
func combinedToFile(t *testing.T, cmd *exec.Cmd) ([]byte, error) {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd.Stdout, cmd.Stderr = f, f
	err = cmd.Run()
	out, rerr := os.ReadFile(f.Name())
	if rerr != nil {
		t.Fatal(rerr)
	}
	return out, err
}

// winPath is p as Wine names it: the Unix filesystem is drive Z:.
func winPath(p string) string {
	return `Z:` + strings.ReplaceAll(p, "/", `\`)
}

// writeType writes an agent type: its type.conf and template.md.
func writeType(t *testing.T, types, name, conf, tmpl string) {
	t.Helper()
	dir := filepath.Join(types, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "type.conf"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "template.md"), []byte(tmpl), 0o600); err != nil {
		t.Fatal(err)
	}
}

// wineProcs lists the command lines of the running processes that name
// file: under Wine each Windows process is a Linux one, whose command line
// is the Windows program's, so /proc shows what lives without tasklist.
func wineProcs(file string) []string {
	var found []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), filepath.Base(file)) && strings.Contains(string(b), "wineagent") {
			found = append(found, strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return found
}

// waitUntil waits, with a generous deadline (wine is slow on a shared
// machine), until cond holds.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); !cond(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
