package launch

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// wtSplit reads argv as wt.exe does (AppCommandlineArgs::BuildCommands in
// microsoft/terminal): a ";" at an argument's start or after any character
// but "\" ends a command, wherever it stands; "\;" then becomes ";".
func wtSplit(argv []string) [][]string {
	delim := regexp.MustCompile(`^;|[^\\];`)
	unescape := func(a string) string { return strings.ReplaceAll(a, `\;`, ";") }
	cmds := [][]string{nil}
	for _, arg := range argv {
		for {
			loc := delim.FindStringIndex(arg)
			if loc == nil {
				cmds[len(cmds)-1] = append(cmds[len(cmds)-1], unescape(arg))
				break
			}
			end := loc[1] - 1 // the ";"
			if end > 0 {
				cmds[len(cmds)-1] = append(cmds[len(cmds)-1], unescape(arg[:end]))
			}
			cmds = append(cmds, []string{"wt.exe"})
			if arg = arg[end+1:]; arg == "" {
				break
			}
		}
	}
	return cmds
}

func TestWTArgs(t *testing.T) {
	for _, self := range []string{
		`C:\Users\José Q\bin\spawn.exe`,
		`C:\tools;old\spawn.exe`,     // wt would split the command here
		`C:\a;;b\c;d\spawn.exe`,      // and here, thrice
		`C:\x\100% ^!&|<>\spawn.exe`, // cmd.exe's characters mean nothing to wt
	} {
		spec := `C:\Users\José Q\AppData\Local\teamkit\runs\demo\w1\r1.spec.json`
		args, err := WTArgs(self, spec, "demo", "w1")
		if err != nil {
			t.Fatalf("WTArgs(%q): %v", self, err)
		}
		want := []string{"-w", "teamkit", "new-tab", "--title", "demo/w1", "--", self, "__run", spec}
		if got := wtSplit(args); len(got) != 1 || !reflect.DeepEqual(got[0], want) {
			t.Errorf("WTArgs(%q) = %q, which wt.exe reads as %q; want one command %q", self, args, got, want)
		}
	}
	// Unescaped, the second path would be two commands: the test reads
	// wt's argv as wt does.
	if got := wtSplit([]string{"--", `C:\tools;old\spawn.exe`}); len(got) != 2 {
		t.Fatalf("wtSplit does not split on ';': %q", got)
	}
}

func TestWTArgsRefused(t *testing.T) {
	for self, why := range map[string]string{
		`C:\a"b\spawn.exe`:    "holds a quote",
		`C:\a\;b\spawn.exe`:   `holds "\;"`,
		`C:\bin\`:             `ends in "\"`,
		"C:\\a\tb\\spawn.exe": "holds a control character",
		"C:\\a\nb\\spawn.exe": "holds a control character",
		"":                    "is empty",
	} {
		_, err := WTArgs(self, `C:\r.spec.json`, "demo", "w1")
		if err == nil || !strings.Contains(err.Error(), why) || !strings.Contains(err.Error(), "use launch=console") {
			t.Errorf("WTArgs(%q): %v, want a refusal that it %s", self, err, why)
		}
	}
}

// The supervisor reports its pid through the spec's PIDFile, and the wt
// launcher reads it once it is whole.
func TestAnnouncePID(t *testing.T) {
	dir := t.TempDir()
	spec := Spec{PIDFile: filepath.Join(dir, "r1.pid"), Log: filepath.Join(dir, "r1.log")}
	done := make(chan struct{})
	var pid int
	var err error
	go func() {
		defer close(done)
		pid, err = awaitPID(context.Background(), spec.PIDFile, time.Hour)
	}()
	announce(spec)
	<-done
	if err != nil || pid != os.Getpid() {
		t.Fatalf("awaitPID = %d, %v; want %d", pid, err, os.Getpid())
	}
	if _, err := os.Stat(spec.PIDFile); !os.IsNotExist(err) {
		t.Errorf("the pid file is left behind: %v", err)
	}
	announce(Spec{Log: spec.Log}) // no PIDFile: nothing written, nothing noted
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("files left: %v", entries)
	}
}

// A tab whose supervisor never reports is a failed launch, said plainly.
func TestAwaitPIDGivesUp(t *testing.T) {
	_, err := awaitPID(context.Background(), filepath.Join(t.TempDir(), "never.pid"), 10*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "did not start the agent's supervisor") {
		t.Fatalf("awaitPID = %v", err)
	}
	path := filepath.Join(t.TempDir(), "bad.pid")
	os.WriteFile(path, []byte("x\n"), 0o600)
	if _, err := awaitPID(context.Background(), path, time.Hour); err == nil || !strings.Contains(err.Error(), strconv.Quote("x\n")) {
		t.Fatalf("awaitPID of a bad file = %v", err)
	}
}
