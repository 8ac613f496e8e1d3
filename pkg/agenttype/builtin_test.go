package agenttype

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/teamkit/teamkit/pkg/briefing"
)

var builtinNames = []string{"claude", "codex", "gemini", "grok-build", "opencode", "probe"}

func TestBuiltinList(t *testing.T) {
	list, err := Finder{Builtin: Builtin()}.List()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range list {
		if l.Source != BuiltinSource || l.Shadowed {
			t.Errorf("listing %+v", l)
		}
		got = append(got, l.Name)
	}
	if !reflect.DeepEqual(got, builtinNames) {
		t.Errorf("built-in types %q, want %q", got, builtinNames)
	}
}

// TestBuiltinTypes checks that each built-in type parses, renders, and puts
// the whole briefing in the one place its boot mode says.
func TestBuiltinTypes(t *testing.T) {
	f := Finder{Builtin: Builtin()}
	for _, name := range builtinNames {
		t.Run(name, func(t *testing.T) {
			ty, err := f.Find(name)
			if err != nil {
				t.Fatal(err)
			}
			if ty.Source != BuiltinSource || ty.Conf.Launch != LaunchBackground || ty.Conf.Monitor {
				t.Errorf("%s: source %q launch %q monitor %v", name, ty.Source, ty.Conf.Launch, ty.Conf.Monitor)
			}
			task := "do it; $(rm -rf /) `x` 'q' \"d\" {name} {prompt_file}\n\tend"
			brief, err := briefing.Render("built-in:"+name+"/template.md", ty.Template,
				briefing.Data{Team: "t1", Name: "w1", Type: name, Run: "r1", Task: task})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(brief, task) || !strings.Contains(brief, "ready mark") {
				t.Errorf("%s briefing lacks the task or the handshake:\n%s", name, brief)
			}
			vars := Vars{Prompt: brief, PromptFile: "/tmp/brief.md", Name: "w1", Team: "t1", Workdir: "/w", TypeDir: "/types/" + name,
				Ready: "/bin/ready", Inbox: "/bin/inbox", Ask: "/bin/ask"}
			argv, err := ty.Conf.Argv(vars)
			if err != nil {
				t.Fatal(err)
			}
			holding := 0
			for _, a := range argv {
				if strings.Contains(a, "ready mark") {
					holding++
				}
			}
			switch ty.Conf.Boot {
			case BootArgv:
				if holding != 1 || !slices.Contains(argv, brief) {
					t.Errorf("boot=argv: the briefing must be exactly one whole argument: %q", argv)
				}
			case BootFile:
				if holding != 0 || !slices.Contains(argv, vars.PromptFile) {
					t.Errorf("boot=file: argv must name the file and not hold the briefing: %q", argv)
				}
			case BootStdin:
				if holding != 0 {
					t.Errorf("boot=stdin: argv must not hold the briefing: %q", argv)
				}
			}
		})
	}
}

func TestBuiltinTypeSettings(t *testing.T) {
	f := Finder{Builtin: Builtin()}
	want := map[string]struct {
		prog      string
		boot      Boot
		handshake Handshake
		timeout   int
	}{
		"codex":      {"codex", BootStdin, HandshakeActAs, 300},
		"claude":     {"claude", BootArgv, HandshakeActAs, 300},
		"gemini":     {"gemini", BootArgv, HandshakeActAs, 300},
		"grok-build": {"grok", BootFile, HandshakeNone, 0},
		"opencode":   {"opencode", BootStdin, HandshakeActAs, 300},
		"probe":      {"sh", BootFile, HandshakeActAs, 30},
	}
	for name, w := range want {
		ty, err := f.Find(name)
		if err != nil {
			t.Fatal(err)
		}
		c := ty.Conf
		if c.Command[0] != w.prog || c.Boot != w.boot || c.Handshake != w.handshake || int(c.ReadyTimeout.Seconds()) != w.timeout {
			t.Errorf("%s: %+v", name, c)
		}
	}
	// Every type of an AI CLI names its credentials and how to install it,
	// so spawn can check them and say what is missing.
	for _, name := range []string{"claude", "codex", "gemini", "opencode", "grok-build"} {
		ty, _ := f.Find(name)
		if len(ty.Conf.Auth.Env) == 0 || ty.Conf.Install == "" {
			t.Errorf("%s names no credentials or no install line: %+v %q", name, ty.Conf.Auth, ty.Conf.Install)
		}
	}
	// opencode never falls back to its vendor's hosted free model.
	opencode, _ := f.Find("opencode")
	if !slices.Contains(opencode.Conf.Env, EnvVar{Name: "OPENCODE_CONFIG_CONTENT", Value: `{"disabled_providers":["opencode"]}`}) {
		t.Errorf("opencode may fall back to its hosted model: %+v", opencode.Conf.Env)
	}
	claude, _ := f.Find("claude")
	// claude allows exactly the teamkit commands the briefing spells out.
	argv, err := claude.Conf.Argv(Vars{Prompt: "p", Ready: "/b/ready", Inbox: "/b/inbox", Ask: "/b/ask"})
	if err != nil || !slices.Contains(argv, "Bash(/b/ready:*),Bash(/b/inbox:*),Bash(/b/ask:*)") {
		t.Errorf("claude's --allowedTools do not name the resolved commands: %q %v", argv, err)
	}
	// codex must not run the agent's commands in a login shell, whose
	// profile resets PATH and drops the spawner's environment.
	codex, _ := f.Find("codex")
	if !slices.Contains(codex.Conf.Command, "allow_login_shell=false") {
		t.Errorf("codex runs commands in a login shell: %q", codex.Conf.Command)
	}
}

func TestProbeScriptSyntax(t *testing.T) {
	data, err := os.ReadFile("../../types/probe/agent.sh")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-n")
	cmd.Stdin = bytes.NewReader(data)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sh -n agent.sh: %v\n%s", err, out)
	}
}

// fakeInbox and fakeReady are stand-ins for the teamkit commands: they log their argv one
// argument per line and serve queued drain output from files.
const fakeInbox = `#!/bin/sh
case "$1" in
drain)
	[ "$2" = --format ] || { echo "fake inbox: unexpected drain $*" >&2; exit 64; }
	n=$(cat "$FAKE/drains" 2>/dev/null || echo 0)
	n=$((n + 1))
	echo "$n" >"$FAKE/drains"
	[ -z "${FAIL_DRAIN:-}" ] || exit 1
	[ ! -f "$FAKE/drain$n" ] || cat "$FAKE/drain$n"
	;;
send)
	shift
	{ echo "--- send"; for a in "$@"; do printf '%s\n' "[$a]"; done; } >>"$FAKE/log"
	[ -z "${FAIL_SEND:-}" ] || exit 1
	;;
*)
	echo "fake inbox: unexpected $*" >&2; exit 64
	;;
esac
`

const fakeReady = `#!/bin/sh
echo "--- ready $* team=$TEAMKIT_TEAM agent=$TEAMKIT_AGENT run=$TEAMKIT_RUN" >>"$FAKE/log"
[ -z "${FAIL_READY:-}" ] || exit 1
`

type probeRun struct {
	code   int
	stderr string
	log    string
	fake   string
}

// runProbe materializes the built-in probe, builds its argv the way spawn
// does, and runs it against the fake tools.
func runProbe(t *testing.T, briefText string, drains []string, extraEnv ...string) probeRun {
	return runProbeWith(t, "", briefText, drains, extraEnv...)
}

// runProbeWith is runProbe with the script run by shell instead of the
// configured "sh", to keep agent.sh portable across POSIX shells.
func runProbeWith(t *testing.T, shell, briefText string, drains []string, extraEnv ...string) probeRun {
	t.Helper()
	ty, err := Finder{Builtin: Builtin()}.Find("probe")
	if err != nil {
		t.Fatal(err)
	}
	typedir, err := ty.Materialize(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fake := t.TempDir()
	bin := filepath.Join(fake, "bin")
	os.Mkdir(bin, 0o755)
	os.WriteFile(filepath.Join(bin, "inbox"), []byte(fakeInbox), 0o755)
	os.WriteFile(filepath.Join(bin, "ready"), []byte(fakeReady), 0o755)
	for i, d := range drains {
		os.WriteFile(filepath.Join(fake, "drain"+string(rune('1'+i))), []byte(d), 0o644)
	}
	brief := filepath.Join(fake, "brief.md")
	if briefText != "<none>" {
		os.WriteFile(brief, []byte(briefText), 0o644)
	}
	argv, err := ty.Conf.Argv(Vars{PromptFile: brief, TypeDir: typedir, Name: "w1", Team: "t1", Workdir: fake,
		Ready: filepath.Join(bin, "ready"), Inbox: filepath.Join(bin, "inbox"), Ask: filepath.Join(bin, "ask")})
	if err != nil {
		t.Fatal(err)
	}
	if shell != "" {
		argv[0] = shell
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = fake
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "FAKE="+fake,
		"TEAMKIT_TEAM=t1", "TEAMKIT_AGENT=w1", "TEAMKIT_RUN=r1", "TEAMKIT_DB="+filepath.Join(fake, "db"))
	cmd.Env = append(cmd.Env, extraEnv...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	code := 0
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		code = exitErr.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	log, _ := os.ReadFile(filepath.Join(fake, "log"))
	return probeRun{code: code, stderr: stderr.String(), log: string(log), fake: fake}
}

func TestProbeAgent(t *testing.T) {
	first := "m1 boss build it\n" +
		"m2 lead $(touch pwned) `touch pwned2` * \\n 'q' \"d\"\n" +
		"\n" +
		"m3 ops\n"
	second := "m4 boss one more"
	shells := []string{""}
	for _, sh := range []string{"dash", "bash", "ksh", "mksh"} {
		if _, err := exec.LookPath(sh); err == nil {
			shells = append(shells, sh)
		}
	}
	for _, shell := range shells {
		t.Run("shell="+shell, func(t *testing.T) {
			checkProbeAgent(t, runProbeWith(t, shell, "# briefing\nhello\n", []string{first, second}))
		})
	}
}

func checkProbeAgent(t *testing.T, r probeRun) {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("probe exited %d; stderr:\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "probe: briefed (17 bytes)") {
		t.Errorf("stderr %q lacks the briefed line", r.stderr)
	}
	want := "--- ready mark team=t1 agent=w1 run=r1\n" +
		"--- send\n[t1]\n[boss]\n[--reply-to]\n[m1]\n[--]\n[done: build it]\n" +
		"--- send\n[t1]\n[lead]\n[--reply-to]\n[m2]\n[--]\n[done: $(touch pwned) `touch pwned2` * \\n 'q' \"d\"]\n" +
		"--- send\n[t1]\n[ops]\n[--reply-to]\n[m3]\n[--]\n[done: ]\n" +
		"--- send\n[t1]\n[boss]\n[--reply-to]\n[m4]\n[--]\n[done: one more]\n"
	if r.log != want {
		t.Errorf("probe did\n%s\nwant\n%s", r.log, want)
	}
	for _, f := range []string{"pwned", "pwned2"} {
		if _, err := os.Stat(filepath.Join(r.fake, f)); err == nil {
			t.Errorf("probe executed text from a message (%s exists)", f)
		}
	}
	if drains, _ := os.ReadFile(filepath.Join(r.fake, "drains")); strings.TrimSpace(string(drains)) != "2" {
		t.Errorf("probe drained %q times, want 2", drains)
	}
}

func TestProbeAgentEmptyInbox(t *testing.T) {
	r := runProbe(t, "b", nil)
	if r.code != 0 || r.log != "--- ready mark team=t1 agent=w1 run=r1\n" {
		t.Errorf("exit %d, log %q, stderr %q", r.code, r.log, r.stderr)
	}
}

func TestProbeAgentFailures(t *testing.T) {
	for _, tt := range []struct {
		name, brief string
		env         []string
		code        int
		stderr      string
	}{
		{"no briefing file", "<none>", nil, 3, "missing, unreadable or empty"},
		{"empty briefing", "", nil, 3, "missing, unreadable or empty"},
		{"ready fails", "b", []string{"FAIL_READY=1"}, 1, ""},
		{"drain fails", "b", []string{"FAIL_DRAIN=1"}, 1, ""},
		{"send fails", "b", []string{"FAIL_SEND=1"}, 1, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := runProbe(t, tt.brief, []string{"m1 boss hi\n"}, tt.env...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("exit %d stderr %q; want exit %d and %q", r.code, r.stderr, tt.code, tt.stderr)
			}
		})
	}
}
