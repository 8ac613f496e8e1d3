//go:build linux

package teamkit_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Targets are the platforms teamkit is built for (make release).
var Targets = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64", "freebsd/amd64"}

// TestCrossBuild builds the commands and vets every package, tests
// included, for every target: a Linux-only call in code that all platforms
// share fails here. (go vet type-checks every package and its tests; go
// build links the six commands.)
func TestCrossBuild(t *testing.T) {
	for _, target := range Targets {
		goos, goarch, _ := strings.Cut(target, "/")
		t.Run(strings.ReplaceAll(target, "/", "_"), func(t *testing.T) {
			t.Parallel()
			for _, args := range [][]string{{"build", "-o", t.TempDir(), "./cmd/..."}, {"vet", "./..."}} {
				cmd := exec.Command("go", args...)
				cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0")
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("GOOS=%s GOARCH=%s go %s: %v\n%s", goos, goarch, strings.Join(args, " "), err, out)
				}
			}
		})
	}
}

// TestWindowsUnderWine runs the Windows build under Wine (Debian's wine64
// 8.0, with the ProcessPrng shim of scripts/wine installed in a prefix of
// its own): the process layer's unit tests (Job Objects, identities), and
// the mailbox commands on a mailbox at a path with spaces and non-ASCII.
// Each wine start costs seconds, so the scenario is small.
//
// Where Wine is not Windows: Wine maps the Unix filesystem to drive Z:, so
// the mailbox path is given as Z:\…; Wine's console is not a real one, so
// CTRL_BREAK may not reach the agent under Wine, and TestTree accepts the
// TerminateJobObject end that follows it after the grace.
func TestWindowsUnderWine(t *testing.T) {
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
	if out, err := exec.Command("sh", "scripts/wine/prefix.sh", prefix).CombinedOutput(); err != nil {
		t.Fatalf("make the wine prefix: %v\n%s", err, out)
	}
	env := append(os.Environ(), "WINEPREFIX="+prefix, "WINEDEBUG=-all")

	// The process layer's own tests, and launch's PATHEXT lookup, as
	// Windows binaries.
	gotest := exec.Command("go", "test", "-count=1", "-exec", wine, "./pkg/proc/")
	lookpath := exec.Command("go", "test", "-count=1", "-exec", wine, "-run", "^TestLookPath$", "./pkg/launch/")
	lookpath.Env = append(env, "GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0")
	if out, err := lookpath.CombinedOutput(); err != nil {
		t.Fatalf("GOOS=windows go test -exec wine -run TestLookPath ./pkg/launch/: %v\n%s", err, out)
	}
	gotest.Env = append(env, "GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0")
	if out, err := gotest.CombinedOutput(); err != nil {
		t.Fatalf("GOOS=windows go test -exec wine ./pkg/proc/: %v\n%s", err, out)
	}

	bin := t.TempDir()
	for _, c := range []string{"inbox", "stale", "ready"} {
		build := exec.Command("go", "build", "-o", filepath.Join(bin, c+".exe"), "./cmd/"+c)
		build.Env = append(os.Environ(), "GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("build %s.exe: %v\n%s", c, err, out)
		}
	}
	dir := filepath.Join(t.TempDir(), "José Q", "mail box")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	db := `Z:` + strings.ReplaceAll(filepath.Join(dir, "team.db"), "/", `\`)
	run := func(want int, c string, args ...string) string {
		t.Helper()
		cmd := exec.Command(wine, append([]string{filepath.Join(bin, c+".exe")}, append(args, "--db", db)...)...)
		cmd.Env = env
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != want {
			t.Fatalf("wine %s %v: exit %d, want %d\n%s%s", c, args, code, want, out.String(), errb.String())
		}
		return strings.ReplaceAll(out.String(), "\r\n", "\n")
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
}
