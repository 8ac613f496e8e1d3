package agenttype

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseFull(t *testing.T) {
	conf := `# a comment
   # an indented comment

  command =  mycli --run "{prompt}" --cfg '{"a":{"b":1}}' --who={name}@{team} -C {workdir}
launch=tmux
boot=argv
monitor = yes
worktree=yes
handshake=actas
ready_timeout=45
env.FOO=bar baz
env.EMPTY=
env._x1=a=b
unset_env=  CLAUDECODE   OTHER_1 
auth_env=KEY_A  KEY_B
auth_file=~/.x/auth.json ${X_HOME:-~/.x}/b.json
auth_login=run mycli login
install=npm install -g mycli
offline_output=waiting for network
output=codex-json
`
	c, err := Parse("x/type.conf", []byte(conf))
	if err != nil {
		t.Fatal(err)
	}
	want := Conf{
		Command:      []string{"mycli", "--run", "{prompt}", "--cfg", `{"a":{"b":1}}`, "--who={name}@{team}", "-C", "{workdir}"},
		Launch:       LaunchTmux,
		Boot:         BootArgv,
		Monitor:      true,
		Worktree:     true,
		Handshake:    HandshakeActAs,
		ReadyTimeout: 45 * time.Second,
		Env:          []EnvVar{{"FOO", "bar baz"}, {"EMPTY", ""}, {"_x1", "a=b"}},
		UnsetEnv:     []string{"CLAUDECODE", "OTHER_1"},
		Auth:         Auth{Env: []string{"KEY_A", "KEY_B"}, Files: []string{"~/.x/auth.json", "${X_HOME:-~/.x}/b.json"}, Login: "run mycli login"},
		Install:      "npm install -g mycli",
		OfflineAfter: DefaultOfflineAfter,
		Output:       "codex-json",
	}
	if c.OfflineOutput == nil || c.OfflineOutput.String() != "waiting for network" {
		t.Errorf("offline_output = %v", c.OfflineOutput)
	}
	c.OfflineOutput = nil
	if !reflect.DeepEqual(c, want) {
		t.Errorf("Parse =\n%+v\nwant\n%+v", c, want)
	}
}

func TestParseDefaults(t *testing.T) {
	c, err := Parse("t.conf", []byte("command=a {prompt}\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := Conf{Command: []string{"a", "{prompt}"}, Launch: LaunchBackground, Boot: BootArgv, Output: "none"}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("Parse = %+v, want %+v", c, want)
	}
	if c.Monitor || c.Handshake != HandshakeNone || c.ReadyTimeout != 0 {
		t.Errorf("defaults: monitor=%v handshake=%q ready_timeout=%v", c.Monitor, c.Handshake, c.ReadyTimeout)
	}
	// A byte-order mark (a Windows editor's) before the first key is not
	// part of it.
	if bom, err := Parse("t.conf", []byte("\ufeffcommand=a {prompt}\r\n")); err != nil || !reflect.DeepEqual(bom, want) {
		t.Errorf("Parse after a BOM = %+v, %v; want %+v", bom, err, want)
	}
}

// Every launch mode parses on every OS (a type may be shared between
// systems); spawn refuses the ones its system lacks.
func TestParseLaunchModes(t *testing.T) {
	for _, l := range []Launch{LaunchBackground, LaunchTmux, LaunchForeground, LaunchConsole, LaunchWT} {
		c, err := Parse("t.conf", []byte("command=a {prompt}\nlaunch="+string(l)))
		if err != nil || c.Launch != l {
			t.Errorf("launch=%s: got %q, %v", l, c.Launch, err)
		}
	}
}

func TestParseBootModes(t *testing.T) {
	for _, conf := range []string{
		"command=a {prompt}\nboot=argv",
		"command=a --file={prompt_file}\nboot=file",
		"command=a {prompt_file} {prompt}\nboot=file",
		"command=a -\nboot=stdin",
		"command=sh {typedir}/x.sh {prompt_file}\nboot=file",
	} {
		if _, err := Parse("t.conf", []byte(conf)); err != nil {
			t.Errorf("Parse(%q): %v", conf, err)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		conf string
		want string // the whole message, or a prefix when it ends in "…"
	}{
		{"command=a {prompt}\ncomand=x", `t.conf:2: unknown key "comand"; expected one of command, launch, boot, monitor, worktree, wake, handshake, ready_timeout, env.NAME, unset_env, auth_env, auth_file, auth_login, install, offline_output, offline_after, output, stop_hook, stop_hook_max, budget_tokens, budget_usd, resume`},
		{"command=a {prompt}\noutput=json", `t.conf:2: output="json"; expected one of none, claude-stream, codex-json, gemini-stream, opencode-json (the CLI's structured stream, or none)`},
		{"command=a {prompt}\nauth_env=", `t.conf:2: auth_env is empty; expected space-separated environment variable names, any one of which holds a key`},
		{"command=a {prompt}\nauth_env=A-B", `t.conf:2: auth_env: "A-B" is not a valid environment variable name; expected space-separated environment variable names`},
		{"command=a {prompt}\noffline_output=(", `t.conf:2: offline_output="("; expected a regular expression…`},
		{"command=a {prompt}\noffline_after=0", `t.conf:2: offline_after="0"; expected a whole number of seconds from 1 to 86400`},
		{"command=a {prompt}\n\n# c\njust words", `t.conf:4: line "just words" has no "="; expected key=value or a # comment`},
		{"command=a {prompt}\n=x", `t.conf:2: empty key before "="; expected key=value`},
		{"command=a {prompt}\nlaunch=tmux\nlaunch=tmux", `t.conf:3: duplicate key "launch" (first set on line 2); expected each key at most once`},
		{"command=a {prompt}\ncommand=b {prompt}", `t.conf:2: duplicate key "command" (first set on line 1)…`},
		{"command=a {prompt}\nenv.A=1\nenv.A=2", `t.conf:3: duplicate key "env.A" (first set on line 2)…`},
		{"command=a {prompt}\nlaunch=window", `t.conf:2: launch="window"; expected background, tmux, foreground, console or wt`},
		{"command=a {prompt}\nlaunch=", `t.conf:2: launch=""; expected background, tmux, foreground, console or wt`},
		{"command=a {prompt}\nboot=pipe", `t.conf:2: boot="pipe"; expected argv, file or stdin`},
		{"command=a {prompt}\nmonitor=true", `t.conf:2: monitor="true"; expected yes or no`},
		{"command=a {prompt}\nworktree=1", `t.conf:2: worktree="1"; expected yes or no`},
		{"command=a {prompt}\nhandshake=none", `t.conf:2: handshake="none"; expected actas (or no handshake line at all)`},
		{"command=a {prompt}\nready_timeout=0", `t.conf:2: ready_timeout="0"; expected a whole number of seconds from 1 to 86400`},
		{"command=a {prompt}\nready_timeout=-5", `t.conf:2: ready_timeout="-5"…`},
		{"command=a {prompt}\nready_timeout=+5", `t.conf:2: ready_timeout="+5"…`},
		{"command=a {prompt}\nready_timeout=1.5", `t.conf:2: ready_timeout="1.5"…`},
		{"command=a {prompt}\nready_timeout=5s", `t.conf:2: ready_timeout="5s"…`},
		{"command=a {prompt}\nready_timeout=86401", `t.conf:2: ready_timeout="86401"…`},
		{"command=a {prompt}\nready_timeout=99999999999999999999", `t.conf:2: ready_timeout=…`},
		{"command=a {prompt}\nenv.1A=x", `t.conf:2: env.1A: "1A" is not a valid environment variable name; expected env.NAME=value with NAME like [A-Za-z_][A-Za-z0-9_]*`},
		{"command=a {prompt}\nenv.=x", `t.conf:2: env.: "" is not a valid environment variable name…`},
		{"command=a {prompt}\nenv.A-B=x", `t.conf:2: env.A-B: "A-B" is not…`},
		{"command=a {prompt}\nenv.TEAMKIT_TEAM=x", `t.conf:2: env.TEAMKIT_TEAM: TEAMKIT_TEAM is set by spawn to give the agent its identity…`},
		{"command=a {prompt}\nunset_env=", `t.conf:2: unset_env is empty; expected space-separated environment variable names`},
		{"command=a {prompt}\nunset_env=A B-C", `t.conf:2: unset_env: "B-C" is not a valid environment variable name; expected space-separated environment variable names`},
		{"command=a {prompt}\nunset_env=A,B", `t.conf:2: unset_env: "A,B" is not…`},
		{"command=a {prompt}\nunset_env=TEAMKIT_DB", `t.conf:2: unset_env: TEAMKIT_DB is set by spawn…`},
		{"command=a {prompt}\nunset_env=X\nenv.X=1", `t.conf:3: env.X is also listed in unset_env (line 2); expected a variable to be either set or unset, not both`},
		{"command=a 'b {prompt}", `t.conf:1: command: unterminated single quote at byte 2; expected shell-like words with balanced quotes`},
		{"command=", `t.conf:1: command is empty; expected the agent's program and its arguments`},
		{"command=   '' {prompt}", `t.conf:1: command is empty…`},
		{"# only\nlaunch=tmux\n", `t.conf: missing required key "command"`},
		{"", `t.conf: missing required key "command"`},
		{"launch=tmux\ncommand=a {promt}", `t.conf:2: command uses unknown placeholder {promt}; expected one of {prompt}, {prompt_file}, {name}, {team}, {workdir}, {typedir}, {ready}, {inbox}, {ask}, {session}`},
		{"command=a --x={prompt}{agent_name}", `t.conf:1: command uses unknown placeholder {agent_name}…`},
		{"\n\ncommand=a b", `t.conf:3: boot=argv but no argument of command contains {prompt}; expected {prompt} in the argument that carries the briefing`},
		{"command=a {prompt}\nboot=file", `t.conf:1: boot=file but no argument of command contains {prompt_file}; expected {prompt_file} in the argument that names the briefing file`},
		{"boot=stdin\ncommand=a -p {prompt}", `t.conf:2: boot=stdin but command also passes {prompt} as an argument; expected the briefing on stdin only, with no {prompt} in command`},
		{"command=a {prompt}\nlaunch=tmux\x00", `t.conf:2: line contains a NUL byte; expected text`},
		// Lone carriage returns (classic Mac line endings, or a stray one)
		// would make one line of the file: launch=tmux read as one more
		// argument of the command, silently.
		{"command=a {prompt}\rlaunch=tmux\r", `t.conf:1: line contains a carriage return that ends no line; expected lines ending in a newline (LF or CRLF)`},
		{"command=a {prompt}\nenv.X=a\rb\r\n", `t.conf:2: line contains a carriage return that ends no line…`},
		// A setting that only means something with another key, given
		// without it, would change nothing, silently: spawn would report
		// a type without a handshake launched after 2 s however long
		// ready_timeout said to wait for its mark.
		{"command=a {prompt}\nready_timeout=120", `t.conf:2: ready_timeout without handshake=actas, so there is no mark to wait for; expected handshake=actas, or no ready_timeout line`},
		{"command=a {prompt}\noffline_after=30", `t.conf:2: offline_after without offline_output, so no line is watched for; expected an offline_output line, or no offline_after line`},
		{"command=a {prompt}\nstop_hook_max=3", `t.conf:2: stop_hook_max without stop_hook, so no hook blocks a stop; expected stop_hook=claude, or no stop_hook_max line`},
	}
	for _, tt := range tests {
		_, err := Parse("t.conf", []byte(tt.conf))
		if err == nil {
			t.Errorf("Parse(%q) succeeded, want %s", tt.conf, tt.want)
			continue
		}
		if !errors.Is(err, ErrMalformed) {
			t.Errorf("Parse(%q) error %v does not wrap ErrMalformed", tt.conf, err)
		}
		var pe *ParseError
		if !errors.As(err, &pe) || pe.File != "t.conf" {
			t.Errorf("Parse(%q) error %#v is not a *ParseError for t.conf", tt.conf, err)
		}
		if prefix, ok := strings.CutSuffix(tt.want, "…"); ok {
			if !strings.HasPrefix(err.Error(), prefix) {
				t.Errorf("Parse(%q) error\n%s\nwant prefix\n%s", tt.conf, err, prefix)
			}
		} else if err.Error() != tt.want {
			t.Errorf("Parse(%q) error\n%s\nwant\n%s", tt.conf, err, tt.want)
		}
	}
}

func TestParseLeavesNonPlaceholderBracesAlone(t *testing.T) {
	c, err := Parse("t.conf", []byte(`command=a '{"k":{}}' {Prompt} {} {a-b} {{prompt}} { prompt }`))
	if err != nil {
		t.Fatal(err)
	}
	argv, err := c.Argv(Vars{Prompt: "P"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a", `{"k":{}}`, "{Prompt}", "{}", "{a-b}", "{P}", "{", "prompt", "}"}
	if !reflect.DeepEqual(argv, want) {
		t.Errorf("Argv = %q, want %q", argv, want)
	}
}

func mustParse(t *testing.T, conf string) Conf {
	t.Helper()
	c, err := Parse("t.conf", []byte(conf))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestArgv(t *testing.T) {
	c := mustParse(t, `command=run --name={name} --team {team} -C {workdir} "{typedir}/x.sh" --brief={prompt_file} "say: {prompt}" {prompt}`)
	vars := Vars{
		Prompt:     "line one\nline two with spaces; $(rm -rf /) `x` 'q' \"d\" * ~",
		PromptFile: "/tmp/brief file.md",
		Name:       "w1",
		Team:       "t",
		Workdir:    "/work dir",
		TypeDir:    "/types/probe",
	}
	argv, err := c.Argv(vars)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"run", "--name=w1", "--team", "t", "-C", "/work dir", "/types/probe/x.sh",
		"--brief=/tmp/brief file.md", "say: " + vars.Prompt, vars.Prompt}
	if !reflect.DeepEqual(argv, want) {
		t.Errorf("Argv =\n%q\nwant\n%q", argv, want)
	}
	// Argv must not change the parsed command: spawn may call it again.
	if c.Command[1] != "--name={name}" {
		t.Errorf("Argv modified the command: %q", c.Command)
	}
}

func TestArgvIsSinglePass(t *testing.T) {
	c := mustParse(t, "command=a {prompt} {name}\n")
	argv, err := c.Argv(Vars{Prompt: "read {prompt_file} and {name} and {team} {prompt}", Name: "{team}", Team: "T"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a", "read {prompt_file} and {name} and {team} {prompt}", "{team}"}
	if !reflect.DeepEqual(argv, want) {
		t.Errorf("Argv = %q, want %q", argv, want)
	}
}

func TestArgvErrors(t *testing.T) {
	c := mustParse(t, "command=a {prompt} {workdir}")
	if _, err := c.Argv(Vars{Prompt: "p"}); err == nil || !strings.Contains(err.Error(), "{workdir}") {
		t.Errorf("Argv with no workdir: %v, want an error naming {workdir}", err)
	}
	big := strings.Repeat("x", MaxArgLen+1)
	_, err := c.Argv(Vars{Prompt: big, Workdir: "/w"})
	var tooLong *TooLongError
	if !errors.As(err, &tooLong) || !strings.Contains(tooLong.Hint(), "boot=file") {
		t.Errorf("Argv with a %d-byte prompt: %v, want an error whose hint suggests boot=file", len(big), err)
	}
	if _, err := c.Argv(Vars{Prompt: big[:MaxArgLen], Workdir: "/w"}); err != nil {
		t.Errorf("Argv with a prompt of exactly MaxArgLen bytes: %v", err)
	}
	if _, err := c.Argv(Vars{Prompt: "a\x00b", Workdir: "/w"}); err == nil || !strings.Contains(err.Error(), "NUL") {
		t.Errorf("Argv with a NUL in the prompt: %v, want an error", err)
	}
	if _, err := (Conf{}).Argv(Vars{}); err == nil {
		t.Error("Argv of an empty Conf succeeded")
	}
}

func TestParseResume(t *testing.T) {
	c, err := Parse("t.conf", []byte("command=a -p {prompt}\nresume=a --resume {session} -p {prompt}"))
	if err != nil {
		t.Fatal(err)
	}
	argv, err := c.ResumeArgv(Vars{Prompt: "news", Session: "s-1"})
	if err != nil || strings.Join(argv, " ") != "a --resume s-1 -p news" {
		t.Fatalf("ResumeArgv = %q, %v", argv, err)
	}
	// A session that is not a session id never reaches argv, whoever
	// recorded it: as an argument, "--x" would be an option to the CLI.
	for _, bad := range []string{"", "--dangerously-skip-permissions", "s 1", "s\n1"} {
		if argv, err := c.ResumeArgv(Vars{Prompt: "news", Session: bad}); err == nil {
			t.Errorf("ResumeArgv with session %q = %q, want an error", bad, argv)
		}
	}
	for conf, want := range map[string]string{
		"command=a {prompt}\nresume=a {prompt}":                    "t.conf:2: resume has no {session}",
		"command=a {prompt}\nresume=a {session}":                   "t.conf:2: resume carries the prompt otherwise than command",
		"command=a {prompt} {session}":                             "t.conf:1: command uses {session}",
		"command=a {prompt}\nresume=a {sesion} {session} {prompt}": "t.conf:2: resume uses unknown placeholder {sesion}",
		// Empty, it is refused as resume='' is (and as an empty command,
		// unset_env or auth_env is), not taken for no resume line at all.
		"command=a {prompt}\nresume=":    "t.conf:2: resume is empty",
		"command=a {prompt}\nresume= \t": "t.conf:2: resume is empty",
		"command=a {prompt}\nresume=''":  "t.conf:2: resume is empty",
	} {
		if _, err := Parse("t.conf", []byte(conf)); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want %s…", conf, err, want)
		}
	}
}

// TestArgvValueAsOption: a value that would make an argument start with
// '-' (a briefing given as a bare {prompt}) is refused unless a "--" comes
// before it; the type's own options, a value joined to an option, and one
// after "--" are as written.
func TestArgvValueAsOption(t *testing.T) {
	vars := Vars{Prompt: "--help me", Workdir: "/w", Name: "w1"}
	for conf, want := range map[string]int{
		"command=mybot {prompt}":                                  1,
		"command=mybot --verbose {prompt}":                        2,
		"command=mybot -p {prompt}":                               2,
		"command=mybot {prompt}{name} x":                          1,
		"command=mybot -- {prompt}":                               -1,
		"command=mybot --prompt={prompt}":                         -1,
		"command=mybot -x -- --y {prompt}":                        -1,
		"command=mybot x{prompt}":                                 -1,
		"command=mybot --cwd {workdir} -- {prompt}":               -1,
		"command={prompt}\nboot=argv":                             -1, // the program, not an option
		"command=mybot {prompt}\nresume=mybot {session} {prompt}": 1,
	} {
		c, err := Parse("t.conf", []byte(conf))
		if err != nil {
			t.Fatalf("Parse(%q): %v", conf, err)
		}
		argv, err := c.Argv(vars)
		var oe *OptionError
		switch {
		case want < 0 && err != nil:
			t.Errorf("%q: %v, want argv", conf, err)
		case want >= 0 && (!errors.As(err, &oe) || oe.Arg != want || oe.Placeholder != "prompt"):
			t.Errorf("%q: argv %q, %v; want an OptionError at argument %d", conf, argv, err, want)
		case want >= 0 && !strings.Contains(oe.Hint(), "--"):
			t.Errorf("%q: hint %q names no --", conf, oe.Hint())
		}
	}
	c, err := Parse("t.conf", []byte("command=mybot {prompt}\nresume=mybot --resume {session} {prompt}"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ResumeArgv(Vars{Prompt: "-x", Session: "s-1"}); !errors.As(err, new(*OptionError)) {
		t.Errorf("ResumeArgv with a briefing starting with '-': %v, want an OptionError", err)
	}
	if _, err := c.Argv(Vars{Prompt: "fix -x"}); err != nil {
		t.Errorf("a briefing with '-' inside: %v", err)
	}
}
