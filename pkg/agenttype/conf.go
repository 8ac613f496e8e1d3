// Package agenttype reads agent types: the type.conf that says how to launch
// an agent CLI and deliver its briefing, and the template.md the briefing is
// rendered from. It finds a type by name on the types path (user directories
// first, then the types built into the binary), parses type.conf strictly so a
// typo is reported with its file and line instead of silently changing how an
// agent starts, and turns the configured command into an argv without ever
// involving a shell.
//
// Public: a Go program embedding teamkit may import this package.
package agenttype

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/teamkit/teamkit/pkg/runstream"
)

// ErrMalformed is wrapped by every error Parse returns for a bad type.conf.
var ErrMalformed = errors.New("malformed type.conf")

// ErrNoConf is a type's directory that holds its other files but no
// type.conf.
var ErrNoConf = errors.New("no type.conf")

// ParseError says what is wrong with one line of a type.conf (Line is 0 when
// the problem is the file as a whole, such as a missing command).
type ParseError struct {
	File     string
	Line     int
	Problem  string
	Expected string
	// UnknownKey is the key when the problem is that no such key exists
	// (so a caller can name the key it is nearest to), else "".
	UnknownKey string
}

func (e *ParseError) Error() string {
	if e.Line == 0 {
		return e.File + ": " + e.Problem
	}
	msg := fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Problem)
	if e.Expected != "" {
		msg += "; expected " + e.Expected
	}
	return msg
}

// Unwrap lets errors.Is(err, ErrMalformed) hold for every parse error.
func (e *ParseError) Unwrap() error { return ErrMalformed }

// Launch is how spawn starts the agent process.
type Launch string

// The launch modes type.conf accepts, on every OS: a type may be shared
// between systems, and spawn refuses one its system lacks (launch.Supported).
const (
	LaunchBackground Launch = "background"
	LaunchTmux       Launch = "tmux"
	LaunchForeground Launch = "foreground"
	LaunchConsole    Launch = "console" // Windows: a new console window
	LaunchWT         Launch = "wt"      // Windows: a Windows Terminal tab
)

// Boot is how the briefing reaches the agent.
type Boot string

// The boot modes type.conf accepts.
const (
	BootArgv  Boot = "argv"
	BootFile  Boot = "file"
	BootStdin Boot = "stdin"
)

// Handshake is what spawn waits for before it reports the agent as up.
type Handshake string

// The handshakes type.conf accepts. HandshakeNone is the absence of the key:
// spawn must not wait, because a type that never marks would hang it.
const (
	HandshakeNone  Handshake = ""
	HandshakeActAs Handshake = "actas"
)

// MaxReadyTimeout bounds ready_timeout: a handshake that takes longer than a
// day is a misconfiguration, and the bound keeps the duration from overflowing.
const MaxReadyTimeout = 24 * time.Hour

// EnvVar is one env.NAME entry, in file order.
type EnvVar struct {
	Name  string
	Value string
}

// Conf is a parsed type.conf.
type Conf struct {
	// Command is the agent's argv before placeholder substitution; Argv
	// fills the placeholders in.
	Command []string
	Launch  Launch
	Boot    Boot
	Monitor bool
	// Worktree: each agent runs in a git worktree of its own (worktree=yes).
	Worktree bool
	// Wake: mail to an agent whose run ended normally re-spawns it
	// (wake=mail; resume does it).
	Wake      bool
	Handshake Handshake
	// ReadyTimeout is 0 when type.conf does not set ready_timeout; spawn
	// then uses its own default.
	ReadyTimeout time.Duration
	// Resume is the argv of a run that continues the CLI session
	// {session} (resume=, see session.go), nil when the CLI cannot.
	Resume []string
	// Env is added to the agent's inherited environment, in file order.
	Env []EnvVar
	// UnsetEnv is removed from the agent's inherited environment.
	UnsetEnv []string
	// Auth is what the CLI needs to reach its model; spawn checks it
	// before launching. Empty: the type needs nothing (or does not say).
	Auth Auth
	// Install says how to install the CLI, for the hint when it is missing.
	Install string
	// OfflineOutput matches the line a CLI that cannot reach its model
	// prints while it waits (nil: none); a run whose last line has matched
	// for OfflineAfter is ended by spawn, with that reason, instead of
	// waiting out the handshake.
	OfflineOutput *regexp.Regexp
	OfflineAfter  time.Duration
	// Output is the format of the structured stream the CLI writes on its
	// standard output (runstream.Formats), which the run's supervisor
	// reads as it comes: "none" (the default) passes the output to the log
	// as it is.
	Output string
	// BudgetTokens and BudgetUSD are each agent run's budget (0: none
	// here): the run's supervisor stops a run that reaches it and asks
	// whether to go on (spawn --budget-tokens, --budget-usd).
	BudgetTokens int64
	BudgetUSD    float64
	// StopHook is the CLI hook that tells a running agent of new mail when
	// its turn ends (StopHookNone: none); StopHookMax caps how often one
	// run is kept going by it.
	StopHook    StopHook
	StopHookMax int
}

// DefaultOfflineAfter is OfflineAfter when type.conf sets offline_output but
// not offline_after.
const DefaultOfflineAfter = 20 * time.Second

// Auth is a type's credentials: any one of the variables set (non-empty),
// or any one of the files present, will do.
type Auth struct {
	// Env are variables that each carry a key or token.
	Env []string
	// Files are login files the CLI keeps, with ~ and $VAR or
	// ${VAR:-default} expanded from the agent's environment.
	Files []string
	// Login is what to run to log in, for the hint.
	Login string
}

// Empty reports whether the type names no credentials at all.
func (a Auth) Empty() bool { return len(a.Env) == 0 && len(a.Files) == 0 }

var (
	envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

	// spawn sets these to tell the agent who it is; a type that overrode or
	// removed them would launch an agent that marks and drains as someone else.
	reservedEnv = map[string]bool{
		"TEAMKIT_DB": true, "TEAMKIT_TEAM": true, "TEAMKIT_AGENT": true,
		"TEAMKIT_RUN": true, "TEAMKIT_ISSUE": true,
	}

	placeholderNames = []string{"prompt", "prompt_file", "name", "team", "workdir", "typedir", "ready", "inbox", "ask", "session"}
)

// Keys are the keys a type.conf may set, env.NAME standing for every env. key.
var Keys = []string{"command", "launch", "boot", "monitor", "worktree", "wake", "handshake", "ready_timeout", "env.NAME", "unset_env", "auth_env", "auth_file", "auth_login", "install", "offline_output", "offline_after", "output", "stop_hook", "stop_hook_max", "budget_tokens", "budget_usd", "resume"}

var knownKeys = "one of " + strings.Join(Keys, ", ")

// Parse reads a type.conf. file names it in error messages. The format is
// key=value lines; blank lines and lines whose first non-blank character is
// # are ignored, and blanks around keys and values are trimmed. Every problem
// is reported as "<file>:<line>: <problem>; expected <what>", wrapping
// ErrMalformed.
func Parse(file string, data []byte) (Conf, error) {
	c := Conf{Launch: LaunchBackground, Boot: BootArgv}
	seen := map[string]int{}
	envLine := map[string]int{}
	commandLine := 0
	fail := func(line int, problem, expected string) (Conf, error) {
		return Conf{}, &ParseError{File: file, Line: line, Problem: problem, Expected: expected}
	}

	// A byte-order mark, as some Windows editors write one, is not part
	// of the first key.
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	for i, raw := range strings.Split(string(data), "\n") {
		n := i + 1
		line := strings.TrimSpace(raw)
		// A carriage return left inside a line (CRLF's is trimmed) means
		// lone-CR line endings, which would run the lines together: the
		// rest taken as the first key's value, silently.
		if strings.IndexByte(line, '\r') >= 0 {
			return fail(n, "line contains a carriage return that ends no line", "lines ending in a newline (LF or CRLF)")
		}
		if line == "" || line[0] == '#' {
			continue
		}
		if strings.IndexByte(line, 0) >= 0 {
			return fail(n, "line contains a NUL byte", "text")
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			return fail(n, fmt.Sprintf("line %q has no \"=\"", line), "key=value or a # comment")
		}
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if key == "" {
			return fail(n, "empty key before \"=\"", "key=value")
		}
		if first, dup := seen[key]; dup {
			return fail(n, fmt.Sprintf("duplicate key %q (first set on line %d)", key, first), "each key at most once")
		}
		seen[key] = n

		switch key {
		case "command":
			words, err := SplitWords(value)
			if err != nil {
				return fail(n, "command: "+err.Error(), "shell-like words with balanced quotes")
			}
			if len(words) == 0 || words[0] == "" {
				return fail(n, "command is empty", "the agent's program and its arguments")
			}
			for _, w := range words {
				if bad := unknownPlaceholder(w); bad != "" {
					return fail(n, fmt.Sprintf("command uses unknown placeholder {%s}", bad),
						"one of {"+strings.Join(placeholderNames, "}, {")+"}")
				}
			}
			c.Command, commandLine = words, n
		case "resume":
			words, err := SplitWords(value)
			if err != nil {
				return fail(n, "resume: "+err.Error(), "shell-like words with balanced quotes")
			}
			if len(words) == 0 {
				// Not absent: nil would read as no resume line at all.
				return fail(n, "resume is empty", "the command line of a run that continues session {session}")
			}
			c.Resume = words
		case "launch":
			switch l := Launch(value); l {
			case LaunchBackground, LaunchTmux, LaunchForeground, LaunchConsole, LaunchWT:
				c.Launch = l
			default:
				return fail(n, fmt.Sprintf("launch=%q", value), "background, tmux, foreground, console or wt")
			}
		case "boot":
			switch b := Boot(value); b {
			case BootArgv, BootFile, BootStdin:
				c.Boot = b
			default:
				return fail(n, fmt.Sprintf("boot=%q", value), "argv, file or stdin")
			}
		case "monitor":
			switch value {
			case "yes":
				c.Monitor = true
			case "no":
				c.Monitor = false
			default:
				return fail(n, fmt.Sprintf("monitor=%q", value), "yes or no")
			}
		case "worktree":
			switch value {
			case "yes":
				c.Worktree = true
			case "no":
				c.Worktree = false
			default:
				return fail(n, fmt.Sprintf("worktree=%q", value), "yes or no")
			}
		case "wake":
			switch value {
			case "mail":
				c.Wake = true
			case "no":
				c.Wake = false
			default:
				return fail(n, fmt.Sprintf("wake=%q", value), "mail or no")
			}
		case "handshake":
			if Handshake(value) != HandshakeActAs {
				return fail(n, fmt.Sprintf("handshake=%q", value), "actas (or no handshake line at all)")
			}
			c.Handshake = HandshakeActAs
		case "ready_timeout":
			secs, err := strconv.ParseUint(value, 10, 32)
			maxSecs := uint64(MaxReadyTimeout / time.Second)
			if err != nil || secs == 0 || secs > maxSecs {
				return fail(n, fmt.Sprintf("ready_timeout=%q", value),
					fmt.Sprintf("a whole number of seconds from 1 to %d", maxSecs))
			}
			c.ReadyTimeout = time.Duration(secs) * time.Second
		case "unset_env":
			names := strings.Fields(value)
			if len(names) == 0 {
				return fail(n, "unset_env is empty", "space-separated environment variable names")
			}
			for _, name := range names {
				if err := checkEnvName(name); err != "" {
					return fail(n, "unset_env: "+err, "space-separated environment variable names")
				}
			}
			c.UnsetEnv = names
		case "auth_env":
			names := strings.Fields(value)
			if len(names) == 0 {
				return fail(n, "auth_env is empty", "space-separated environment variable names, any one of which holds a key")
			}
			for _, name := range names {
				if !envName.MatchString(name) {
					return fail(n, fmt.Sprintf("auth_env: %q is not a valid environment variable name", name), "space-separated environment variable names")
				}
			}
			c.Auth.Env = names
		case "auth_file":
			files := strings.Fields(value)
			if len(files) == 0 {
				return fail(n, "auth_file is empty", "space-separated paths of login files (~ and $VAR allowed)")
			}
			c.Auth.Files = files
		case "auth_login":
			c.Auth.Login = value
		case "install":
			c.Install = value
		case "offline_output":
			re, err := regexp.Compile(value)
			if err != nil || value == "" {
				return fail(n, fmt.Sprintf("offline_output=%q", value), "a regular expression matching the CLI's line for \"cannot reach the model\"")
			}
			c.OfflineOutput = re
		case "output":
			if !runstream.Known(value) {
				return fail(n, fmt.Sprintf("output=%q", value), "one of "+strings.Join(runstream.Formats(), ", ")+" (the CLI's structured stream, or none)")
			}
			c.Output = value
		case "offline_after":
			secs, err := strconv.ParseUint(value, 10, 32)
			maxSecs := uint64(MaxReadyTimeout / time.Second)
			if err != nil || secs == 0 || secs > maxSecs {
				return fail(n, fmt.Sprintf("offline_after=%q", value),
					fmt.Sprintf("a whole number of seconds from 1 to %d", maxSecs))
			}
			c.OfflineAfter = time.Duration(secs) * time.Second
		case "stop_hook":
			h, ok := parseStopHook(value)
			if !ok {
				return fail(n, fmt.Sprintf("stop_hook=%q", value), "claude (or no stop_hook line at all)")
			}
			c.StopHook = h
		case "budget_tokens":
			var ok bool
			if c.BudgetTokens, ok = ParseBudgetTokens(value); !ok {
				return fail(n, fmt.Sprintf("budget_tokens=%q", value), BudgetTokensExpected)
			}
		case "budget_usd":
			var ok bool
			if c.BudgetUSD, ok = ParseBudgetUSD(value); !ok {
				return fail(n, fmt.Sprintf("budget_usd=%q", value), BudgetUSDExpected)
			}
		case "stop_hook_max":
			max, expected := parseStopHookMax(value)
			if expected != "" {
				return fail(n, fmt.Sprintf("stop_hook_max=%q", value), expected)
			}
			c.StopHookMax = max
		default:
			name, isEnv := strings.CutPrefix(key, "env.")
			if !isEnv {
				return Conf{}, &ParseError{File: file, Line: n, Problem: fmt.Sprintf("unknown key %q", key), Expected: knownKeys, UnknownKey: key}
			}
			if err := checkEnvName(name); err != "" {
				return fail(n, "env."+name+": "+err, "env.NAME=value with NAME like [A-Za-z_][A-Za-z0-9_]*")
			}
			c.Env = append(c.Env, EnvVar{Name: name, Value: value})
			envLine[name] = n
		}
	}

	if commandLine == 0 {
		return Conf{}, &ParseError{File: file, Problem: `missing required key "command"`}
	}
	// A setting that only means something with another key would, without
	// it, change nothing: a type that waits for no mark, watches no line or
	// has no hook, whatever its type.conf seems to say.
	for _, dep := range []struct{ key, needs, problem, expected string }{
		{"ready_timeout", "handshake", "ready_timeout without handshake=actas, so there is no mark to wait for", "handshake=actas, or no ready_timeout line"},
		{"offline_after", "offline_output", "offline_after without offline_output, so no line is watched for", "an offline_output line, or no offline_after line"},
		{"stop_hook_max", "stop_hook", "stop_hook_max without stop_hook, so no hook blocks a stop", "stop_hook=claude, or no stop_hook_max line"},
	} {
		if n, set := seen[dep.key]; set {
			if _, ok := seen[dep.needs]; !ok {
				return fail(n, dep.problem, dep.expected)
			}
		}
	}
	if c.Output == "" {
		c.Output = runstream.None
	}
	if c.StopHook != StopHookNone && c.StopHookMax == 0 {
		c.StopHookMax = DefaultStopHookMax
	}
	if c.OfflineOutput != nil && c.OfflineAfter == 0 {
		c.OfflineAfter = DefaultOfflineAfter
	}
	for _, name := range c.UnsetEnv {
		if n, set := envLine[name]; set {
			return fail(n, fmt.Sprintf("env.%s is also listed in unset_env (line %d)", name, seen["unset_env"]),
				"a variable to be either set or unset, not both")
		}
	}
	if problem, expected := c.checkResume(); problem != "" {
		line := commandLine
		if len(c.Resume) > 0 {
			line = seen["resume"]
		}
		return fail(line, problem, expected)
	}
	usesPrompt, usesFile := c.uses("prompt"), c.uses("prompt_file")
	switch {
	case c.Boot == BootArgv && !usesPrompt:
		return fail(commandLine, "boot=argv but no argument of command contains {prompt}",
			"{prompt} in the argument that carries the briefing")
	case c.Boot == BootFile && !usesFile:
		return fail(commandLine, "boot=file but no argument of command contains {prompt_file}",
			"{prompt_file} in the argument that names the briefing file")
	case c.Boot == BootStdin && usesPrompt:
		return fail(commandLine, "boot=stdin but command also passes {prompt} as an argument",
			"the briefing on stdin only, with no {prompt} in command")
	}
	return c, nil
}

// checkEnvName returns why name cannot be an environment variable for the
// agent, or "" when it can.
func checkEnvName(name string) string {
	switch {
	case !envName.MatchString(name):
		return fmt.Sprintf("%q is not a valid environment variable name", name)
	case reservedEnv[name]:
		return fmt.Sprintf("%s is set by spawn to give the agent its identity", name)
	}
	return ""
}

func (c Conf) uses(placeholder string) bool {
	for _, w := range c.Command {
		found := false
		forEachPlaceholder(w, func(_, _ int, name string) {
			found = found || name == placeholder
		})
		if found {
			return true
		}
	}
	return false
}

// unknownPlaceholder returns the first {word} in w that is not a known
// placeholder, or "".
func unknownPlaceholder(w string) string {
	bad := ""
	forEachPlaceholder(w, func(_, _ int, name string) {
		if bad == "" && !isPlaceholder(name) {
			bad = name
		}
	})
	return bad
}

func isPlaceholder(name string) bool {
	for _, p := range placeholderNames {
		if p == name {
			return true
		}
	}
	return false
}

// forEachPlaceholder calls f for every {word} in s whose word is one or more
// of [a-z_], with the byte range of the whole token. Any other brace — JSON,
// {Upper}, {} — is not a placeholder and is left for the agent to see.
func forEachPlaceholder(s string, f func(start, end int, name string)) {
	for i := 0; i < len(s); i++ {
		if s[i] != '{' {
			continue
		}
		j := i + 1
		for j < len(s) && (s[j] >= 'a' && s[j] <= 'z' || s[j] == '_') {
			j++
		}
		if j > i+1 && j < len(s) && s[j] == '}' {
			f(i, j+1, s[i+1:j])
			i = j
		}
	}
}

// Vars are the values substituted for the placeholders of a command.
type Vars struct {
	Prompt     string // {prompt}: the whole briefing
	PromptFile string // {prompt_file}: the path of a file holding the briefing
	Name       string // {name}
	Team       string // {team}
	Workdir    string // {workdir}
	TypeDir    string // {typedir}: the directory holding the type's files
	// {ready}, {inbox}, {ask}: the teamkit commands as the briefing spells
	// them (absolute paths), so a type can allow exactly those, say in
	// claude's --allowedTools.
	Ready, Inbox, Ask string
	// Session is {session}: the CLI session a resume= run continues.
	Session string
}

func (v Vars) lookup(name string) string {
	switch name {
	case "prompt":
		return v.Prompt
	case "prompt_file":
		return v.PromptFile
	case "name":
		return v.Name
	case "team":
		return v.Team
	case "workdir":
		return v.Workdir
	case "typedir":
		return v.TypeDir
	case "ready":
		return v.Ready
	case "inbox":
		return v.Inbox
	case "ask":
		return v.Ask
	case "session":
		return v.Session
	}
	return ""
}

// MaxArgLen is the longest single argument Linux accepts (MAX_ARG_STRLEN is
// 128 KiB including the terminating NUL); longer ones make exec fail with
// E2BIG, so Argv refuses them up front with an explanation.
const MaxArgLen = 128*1024 - 1

// TooLongError is a command too long for the operating system to start it
// with (one argument on Linux, the whole command line on Windows): what
// makes it so is the briefing, given in an argument (boot=argv).
type TooLongError struct{ Reason string }

func (e *TooLongError) Error() string { return e.Reason }

// Hint names the boot modes that take a briefing of any size.
func (e *TooLongError) Hint() string {
	return "deliver a briefing this large with boot=file or boot=stdin"
}

// OptionError is a command one of whose arguments a placeholder's value
// makes start with '-' (a briefing that starts with "-", given as a bare
// {prompt}), with no "--" before it: the CLI would read the value as an
// option. spawn launches nothing rather than alter the type's argv.
type OptionError struct {
	Arg         int    // the argument's index
	Placeholder string // the placeholder that starts it
}

func (e *OptionError) Error() string {
	what := "its value"
	if e.Placeholder == "prompt" {
		what = "the briefing"
	}
	return fmt.Sprintf("command argument %d starts with {%s}, and %s starts with \"-\": with no \"--\" before it, the CLI would read it as an option",
		e.Arg, e.Placeholder, what)
}

// Hint says how to write the type so that the value stays one argument.
func (e *OptionError) Hint() string {
	return fmt.Sprintf("in type.conf, put -- before {%s} (command= and resume=) when the CLI takes it as a positional argument, "+
		"or join it to its option (--prompt={%s}); or start the type's template.md with text", e.Placeholder, e.Placeholder)
}

// Argv returns the command with its placeholders replaced by vars. Each
// placeholder is replaced inside the argument that holds it, in one pass over
// the configured text, so a value that itself contains "{name}" stays as it is
// and no value can create or split arguments. A placeholder the command uses
// whose value is empty is an error (it would hand the agent a broken
// argument), as is an argument over MaxArgLen or one holding a NUL byte, and
// one that a value makes start with '-' with no "--" before it
// (OptionError): the value would reach the CLI as an option. Only values
// can do that; a '-' written in type.conf is the type's own option.
func (c Conf) Argv(vars Vars) ([]string, error) {
	if len(c.Command) == 0 {
		return nil, errors.New("type has no command")
	}
	argv := make([]string, len(c.Command))
	dashes := false // a "--" argument came before: the rest are operands
	for i, w := range c.Command {
		var first string // the placeholder w starts with, if any
		forEachPlaceholder(w, func(start, _ int, name string) {
			if start == 0 && isPlaceholder(name) {
				first = name
			}
		})
		var (
			b    strings.Builder
			last int
			err  error
		)
		forEachPlaceholder(w, func(start, end int, name string) {
			if err != nil || !isPlaceholder(name) {
				return
			}
			val := vars.lookup(name)
			if val == "" {
				err = fmt.Errorf("command argument %d uses {%s} but no value was given for it", i, name)
				return
			}
			b.WriteString(w[last:start])
			b.WriteString(val)
			last = end
		})
		if err != nil {
			return nil, err
		}
		b.WriteString(w[last:])
		arg := b.String()
		if len(arg) > MaxArgLen {
			return nil, &TooLongError{fmt.Sprintf("command argument %d is %d bytes, over the %d-byte limit Linux puts on one argument", i, len(arg), MaxArgLen)}
		}
		if strings.IndexByte(arg, 0) >= 0 {
			return nil, fmt.Errorf("command argument %d contains a NUL byte, which no argument can carry", i)
		}
		if i > 0 && first != "" && !dashes && strings.HasPrefix(arg, "-") {
			return nil, &OptionError{Arg: i, Placeholder: first}
		}
		dashes = dashes || i > 0 && w == "--"
		argv[i] = arg
	}
	return argv, nil
}
