package spawn_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/teamkit/teamkit/internal/cmd/spawn"
	"github.com/teamkit/teamkit/internal/command/commandtest"
)

// Everything wrong with a spawn's command line is refused with a usage
// error before it touches the mailbox: the database file is never created.
// (Spawns that launch are in launch_test.go.)
func TestSpawnRefusedBeforeTheMailbox(t *testing.T) {
	h := commandtest.New(t, "spawn", spawn.App)
	missing := filepath.Join(t.TempDir(), "no-such-task.md")
	for _, c := range []struct {
		args  []string
		stdin string
		code  int
		want  string
	}{
		{[]string{"probe"}, "", 64, "usage: spawn <type> <name>"},
		{[]string{"probe", "w1"}, "", 64, "missing --team (or set TEAMKIT_TEAM)"},
		{[]string{"probe", "w/1", "--team", "t"}, "", 64, `agent name "w/1" must match`},
		{[]string{"pro be", "w1", "--team", "t"}, "", 64, `type name "pro be" must match`},
		{[]string{"probe", "w1", "--team", "t", "--task", "a", "--task-file", "-"}, "", 64, "give --task or --task-file, not both"},
		{[]string{"probe", "w1", "--team", "t", "--task-file", missing}, "", 1, "--task-file names a file holding the task text"},
		{[]string{"probe", "w1", "--team", "t", "--task-file", "-"}, "bad \x00 byte", 64, "spawn: error: task:"},
		{[]string{"probe", "w1", "--team", "t", "--issue", "octo/repo"}, "", 64, "spawn: error:"},
		{[]string{"probe", "w1", "--team", "t", "--timeout", "-5s"}, "", 64, "spawn: error:"},
	} {
		r := h.RunIn(c.stdin, c.args...)
		if r.Code != c.code || !strings.Contains(r.Stderr, c.want) || r.Stdout != "" {
			t.Errorf("spawn %q: exit %d, stdout %q, stderr %q; want %d and %q", c.args, r.Code, r.Stdout, r.Stderr, c.code, c.want)
		}
	}
	if _, err := os.Stat(h.DB); !os.IsNotExist(err) {
		t.Errorf("a refused spawn touched the mailbox %s (%v)", h.DB, err)
	}
}

// A spawn that cannot start (a type unknown or broken, a workdir missing,
// the type's CLI not installed, its key not set) is refused before the
// mailbox is opened, as a bad command line is: no mailbox is created for it.
func TestSpawnThatCannotStartCreatesNoMailbox(t *testing.T) {
	types := t.TempDir()
	for name, conf := range map[string]string{
		"broken": "command=/bin/true\nboot=stdin\nlaunch=sideways\n",
		"nocli":  "command=teamkit-no-such-cli --go\nboot=stdin\n",
		"keyed":  "command=/bin/true\nboot=stdin\nauth_env=TEAMKIT_TEST_NO_SUCH_KEY\n",
	} {
		if err := os.MkdirAll(filepath.Join(types, name), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(types, name, "type.conf"), []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	h := commandtest.New(t, "spawn", spawn.App)
	h.Vars["TEAMKIT_TYPES"] = types
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"nosuch", "w1", "--team", "t"}, `unknown type "nosuch"`},
		{[]string{"broken", "w1", "--team", "t"}, "launch"},
		{[]string{"nocli", "w1", "--team", "t"}, "teamkit-no-such-cli"},
		{[]string{"keyed", "w1", "--team", "t"}, "TEAMKIT_TEST_NO_SUCH_KEY is not set"},
		{[]string{"keyed", "w1", "--team", "t", "--no-auth-check", "--workdir", filepath.Join(types, "missing")}, "is not a directory"},
		// A repository's URL, credentials and all, is no workdir: the
		// refusal names it without the password.
		{[]string{"keyed", "w1", "--team", "t", "--no-auth-check", "--workdir", "https://bot:s3cret-tok@git.example.com/team/repo"}, "is a URL, not a directory"},
	} {
		r := h.Run(c.args...)
		if r.Code == 0 || !strings.Contains(r.Stderr, c.want) || r.Stdout != "" {
			t.Errorf("spawn %q: exit %d, stdout %q, stderr %q; want a failure saying %q", c.args, r.Code, r.Stdout, r.Stderr, c.want)
		}
		if strings.Contains(r.Stderr, "s3cret") {
			t.Errorf("spawn %q printed the URL's password: %q", c.args, r.Stderr)
		}
		if _, err := os.Stat(h.DB); !os.IsNotExist(err) {
			t.Fatalf("spawn %q, refused, created the mailbox %s (%v)", c.args, h.DB, err)
		}
	}
}

// spawn's other verbs refuse a bad command line before the mailbox is
// opened, as spawn itself does.
func TestVerbsRefusedBeforeTheMailbox(t *testing.T) {
	h := commandtest.New(t, "spawn", spawn.App)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"list"}, "missing <team>"},
		{[]string{"list", "t", "extra"}, `unexpected argument "extra"`},
		{[]string{"list", "a/b"}, "team name"},
		{[]string{"list", "t", "--watch", "--json"}, "--watch draws a table"},
		{[]string{"list", "t", "--watch", "--interval", "10ms"}, "--interval 10ms is too short"},
		{[]string{"list", "t", "--watch", "--interval", "soon"}, `"soon" is not a duration`},
		{[]string{"log", "t"}, "missing <name>"},
		{[]string{"log", "t", "w1", "extra"}, `unexpected argument "extra"`},
		{[]string{"stop", "t"}, "missing <name>"},
		{[]string{"stop", "t", "w1", "--grace", "-1s"}, "--grace must be positive"},
		{[]string{"stop", "t", "--all", "w1"}, `unexpected argument "w1"`},
	} {
		r := h.Run(c.args...)
		if r.Code != 64 || !strings.Contains(r.Stderr, c.want) || r.Stdout != "" {
			t.Errorf("spawn %q: exit %d, stdout %q, stderr %q; want 64 and %q", c.args, r.Code, r.Stdout, r.Stderr, c.want)
		}
	}
	if _, err := os.Stat(h.DB); !os.IsNotExist(err) {
		t.Errorf("a refused verb touched the mailbox %s (%v)", h.DB, err)
	}
	// And one that runs opens it: an empty team lists nothing, with a note.
	if r := h.Run("list", "t"); r.Code != 0 || r.Stdout != "" || !strings.Contains(r.Stderr, `team "t" has no agents`) {
		t.Errorf("spawn list t: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
}
