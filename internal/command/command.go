// Package command is the small runtime the six teamkit commands share, so they
// behave as one toolkit: injected streams, environment and clock (every command
// runs in-process under test), flags accepted before or after positional
// arguments, the exit codes 0/1/2/64, one-line errors with an optional hint,
// mailbox selection (--db, TEAMKIT_DB, the XDG default) and identity taken from
// the variables spawn exports.
//
// Nothing in pkg/ calls os.Exit, reads os.Getenv or writes os.Stdout directly;
// only Main, called from each cmd/<name>/main.go, touches the real process.
//
// Internal: the commands' own code; no user should import it.
package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/termsafe"
	"github.com/teamkit/teamkit/pkg/text"
)

// Exit codes, the same in every command (DESIGN.md).
const (
	ExitOK        = 0  // done, or the condition is true
	ExitFailure   = 1  // database, network, config
	ExitCondition = 2  // the condition the command watches for
	ExitUsage     = 64 // the command line is wrong
)

// Env is everything a command may touch outside its own memory.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Getenv returns "" for unset variables, like os.Getenv.
	Getenv func(string) string
	// Environ is the whole environment, handed on to agents that spawn starts.
	Environ func() []string
	Now     func() time.Time
	// StderrTTY says whether progress (elapsed time) may be drawn on Stderr.
	StderrTTY bool
	// StdoutTTY says whether Stdout is a terminal: text others wrote
	// (bodies, questions, answers) is then shown escaped (see Show).
	StdoutTTY bool
	// StdinTTY says whether Stdin is a terminal, so a command about to read
	// a body from it can say so instead of waiting silently.
	StdinTTY bool
}

// Show is how a command prints text that someone else wrote — a message
// body, a question, an answer: escaped visibly when stdout is a terminal
// (termsafe.Escape), byte for byte to a pipe or a file.
func (e *Env) Show(s string) string {
	if e.StdoutTTY {
		return termsafe.Escape(s)
	}
	return s
}

// OS is the Env of the running process.
func OS() *Env {
	return &Env{
		Stdin:     os.Stdin,
		Stdout:    os.Stdout,
		Stderr:    os.Stderr,
		Getenv:    os.Getenv,
		Environ:   os.Environ,
		Now:       time.Now,
		StderrTTY: term.IsTerminal(int(os.Stderr.Fd())),
		StdoutTTY: term.IsTerminal(int(os.Stdout.Fd())),
		StdinTTY:  term.IsTerminal(int(os.Stdin.Fd())),
	}
}

// Error carries an exit code, and a hint for the user, up to Run.
type Error struct {
	Code int
	Err  error
	Hint string
	// Quiet errors have already said what they mean on stdout (stale's list,
	// spawn's status line), so Run prints nothing more.
	Quiet bool
}

func (e *Error) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit %d", e.Code)
	}
	return e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Usagef is a usage error (exit 64). A usage error echoes what was
// typed, and a database URL typed where a team belongs ("inbox copy URL",
// --to forgotten) may carry its password: every string argument is shown
// as mailbox.Redact shows it. Errors only, so no run that succeeds pays.
func Usagef(format string, args ...any) error {
	for i, a := range args {
		if s, ok := a.(string); ok {
			args[i] = mailbox.Redact(s)
		}
	}
	return &Error{Code: ExitUsage, Err: fmt.Errorf(format, args...)}
}

// UsageOf is err, a package's refusal of something typed, as a usage
// error (exit 64). err may quote what was typed, typed: each of those that
// is a URL (a mailbox URL given to the wrong flag) is shown as
// mailbox.Redact shows it, never with its password. errors.Is and a hint
// of err's still see err.
func UsageOf(err error, typed ...string) error {
	msg := redactTyped(err.Error(), typed...)
	if msg != err.Error() {
		err = &shownError{msg: msg, err: err}
	}
	return &Error{Code: ExitUsage, Err: err}
}

// redactTyped is msg with each of typed that mailbox.Redact changes (a URL
// with its password) shown as Redact shows it: as %q quotes it and as it
// is, and trimmed of blanks too, as a parser quotes what it read (a list's
// "alice, postgres://…" entry, a flag value ParseDuration trimmed).
func redactTyped(msg string, typed ...string) string {
	for _, v := range typed {
		for _, v := range []string{v, strings.TrimSpace(v)} {
			shown := mailbox.Redact(v)
			if shown == v {
				continue
			}
			q, qs := strconv.Quote(v), strconv.Quote(shown)
			msg = strings.ReplaceAll(msg, q[1:len(q)-1], qs[1:len(qs)-1])
			msg = strings.ReplaceAll(msg, v, shown)
		}
	}
	return msg
}

// shownError is err with its message redacted (UsageOf).
type shownError struct {
	msg string
	err error
}

func (e *shownError) Error() string { return e.msg }
func (e *shownError) Unwrap() error { return e.err }

// Condition is exit 2: the watched-for condition holds. What it means has
// already been printed on stdout.
func Condition() error { return &Error{Code: ExitCondition, Quiet: true} }

// WithHint attaches a hint line to err, keeping its exit code.
func WithHint(err error, hint string) error {
	var e *Error
	if errors.As(err, &e) {
		c := *e
		c.Hint = hint
		return &c
	}
	return &Error{Code: ExitFailure, Err: err, Hint: hint}
}

// Hinter is implemented by errors that know what the user probably meant.
type Hinter interface{ Hint() string }

// App describes one command: its urfave app, built against an Env, and the
// subcommand used when the first positional argument names none (inbox's
// drain).
type App struct {
	Build   func(env *Env) *cli.App
	Default string
	// Types lists the agent types a <type> argument completes to (spawn's);
	// a field, so that only spawn links the types.
	Types func(env *Env) []string
	// Mail: a <name> or <to> argument completes to every name the team's
	// mail went to, not only its agents (inbox's: a drain needs no agent).
	Mail bool
	// Quick names the verbs (the app's name for its own action) that catch
	// SIGINT and SIGTERM only where they wait or hold a lease
	// (CatchSignals), not as they start: the short commands an agent runs
	// on every turn.
	Quick []string
}

// Main runs app as the real process and returns the exit code for os.Exit.
func Main(app App) int { return MainEnv(app, OS()) }

// MainEnv is Main with env for the process's own (the test binary runs a
// command with its clock skewed, as another host's may be).
func MainEnv(app App, env *Env) int { return mainArgs(app, env, os.Args) }

func mainArgs(app App, env *Env, args []string) int {
	if code, ok := handOff(app, args, env); ok {
		return code
	}
	ctx, cancel := signalContext()
	defer cancel()
	return Run(ctx, app, env, args)
}

// Run runs app with args (args[0] is the program name) and returns the exit
// code. It never exits the process.
func Run(ctx context.Context, app App, env *Env, args []string) int {
	if n := len(args); n > 1 && args[n-1] == CompleteFlag {
		return complete(ctx, app, env, args[:n-1])
	}
	a := prepare(app, env)
	name := a.Name
	if len(args) > 2 && args[1] == "help" && a.Command(args[2]) == nil {
		// "inbox help nosuch" is a mistake, not a request for inbox's help.
		return report(env.Stderr, name, UnknownVerb(a, args[2]))
	}
	norm, implied, missing := normalize(a, app.Default, helpArgs(a, args))
	if missing != "" {
		return report(env.Stderr, name, WithHint(Usagef("%s needs a value", missing), "run '"+name+" --help'"))
	}
	a.Metadata = map[string]any{impliedKey: implied}
	err := a.RunContext(ctx, norm)
	return report(env.Stderr, name, err)
}

// impliedKey marks, in the app's Metadata, a run whose verb was not typed
// but implied (inbox's drain): a stray first word was then meant as a verb.
const impliedKey = "teamkit-implied-verb"

// Implied reports whether the verb running was implied rather than typed.
func Implied(c *cli.Context) bool {
	v, _ := c.App.Metadata[impliedKey].(bool)
	return v
}

// prepare builds app against env with the toolkit's shared behaviour: exit
// codes ours to map, usage errors with a hint, --version, and a completion
// verb printing the shell completion made from these same definitions.
func prepare(app App, env *Env) *cli.App {
	a := app.Build(env)
	a.Reader = env.Stdin
	a.Writer = env.Stdout
	a.ErrWriter = env.Stderr
	a.HideHelpCommand = true
	a.Version = Version()
	a.ExitErrHandler = func(*cli.Context, error) {} // exit codes are ours to map
	a.OnUsageError = usageError
	a.Commands = append(a.Commands, &cli.Command{
		Name:        "completion",
		Usage:       "print the " + strings.Join(Shells, ", ") + " completion script",
		ArgsUsage:   "bash|zsh|fish",
		UsageText:   a.Name + " completion bash|zsh|fish",
		Description: "Example:\n   " + a.Name + " completion bash > ~/.local/share/bash-completion/completions/" + a.Name,
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return Usagef("usage: %s completion bash|zsh|fish", a.Name)
			}
			s, err := Completion(a, c.Args().First())
			if err != nil {
				return err
			}
			_, err = io.WriteString(env.Stdout, s)
			return err
		},
	})
	for _, c := range a.Commands {
		setUsageError(c)
	}
	catchAtStart(a, app.Quick)
	if a.Action == nil && len(a.Commands) > 0 {
		// Without this, urfave/cli answers a mistyped verb with "No help
		// topic" and exit 1; it is a usage error.
		a.Action = func(c *cli.Context) error {
			if c.NArg() > 0 {
				return UnknownVerb(a, c.Args().First())
			}
			return WithHint(Usagef("missing command (want %s)", verbs(a.Commands)), "run '"+a.Name+" --help'")
		}
	}
	return a
}

// helpArgs turns "cmd help [verb]" into "cmd [verb] --help": help is never
// a team name, and "stale help" must not look like a healthy empty team.
func helpArgs(a *cli.App, args []string) []string {
	if len(args) < 2 || args[1] != "help" {
		return args
	}
	out := []string{args[0]}
	if len(args) > 2 && a.Command(args[2]) != nil {
		out = append(out, args[2])
	}
	return append(out, "--help")
}

// UnknownVerb is the usage error for a first word that names no verb of a,
// with the nearest verb as a hint when one is close ("sned" → send).
func UnknownVerb(a *cli.App, word string) error {
	want := verbs(a.Commands)
	if want == "" {
		return WithHint(Usagef("unknown command %q: %s has no verbs", word, a.Name), "run '"+a.Name+" --help'")
	}
	err := Usagef("unknown command %q (want %s)", word, want)
	if best := NearVerb(a, word); best != "" {
		return WithHint(err, "did you mean '"+a.Name+" "+best+"'?")
	}
	return WithHint(err, "run '"+a.Name+" --help'")
}

// NearVerb is the visible verb of a that word is probably a typo of, or "".
func NearVerb(a *cli.App, word string) string {
	var names []string
	for _, c := range a.Commands {
		if !c.Hidden {
			names = append(names, c.Name)
		}
	}
	return Nearest(word, names)
}

// editDistance is the Levenshtein distance between a and b, in bytes (verbs
// are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

func verbs(cmds []*cli.Command) string {
	var names []string
	for _, c := range cmds {
		if !c.Hidden && c.Name != "completion" {
			names = append(names, c.Name)
		}
	}
	return strings.Join(names, ", ")
}

// setUsageError also takes urfave/cli's "help" subcommand away from every
// verb: with it, "inbox send help w hi" (team "help") printed "No help topic
// for 'w'" and exited 1. --help still shows a verb's help.
func setUsageError(c *cli.Command) {
	c.OnUsageError = usageError
	c.HideHelpCommand = true
	for _, s := range c.Subcommands {
		setUsageError(s)
	}
}

func usageError(c *cli.Context, err error, _ bool) error {
	name := strings.TrimSpace(c.Command.HelpName)
	flags := c.Command.Flags
	if name == "" {
		name, flags = c.App.Name, c.App.Flags
	}
	hint := fmt.Sprintf("run '%s --help'", name)
	msg := err.Error()
	if bad, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		bad = strings.TrimLeft(bad, "-")
		err = fmt.Errorf("unknown flag --%s", bad)
		if best := Nearest(bad, flagNames(flags)); best != "" {
			hint = "did you mean --" + best + "?"
		}
	} else if m := invalidValue().FindStringSubmatch(msg); m != nil {
		err, hint = badFlagValue(flags, m[1], m[2], m[3]), fmt.Sprintf("run '%s --help'", name)
	}
	return &Error{Code: ExitUsage, Err: err, Hint: hint}
}

// UsageLine is "usage: NAME ARGS [--flag V]…" made from the flags
// themselves, each value named by its usage's `PLACEHOLDER`, so a usage
// error's line never leaves out a flag added later (resume's once lacked
// --parallel and --json).
func UsageLine(name, args string, flags []cli.Flag) string {
	var b strings.Builder
	b.WriteString("usage: " + name)
	if args != "" {
		b.WriteString(" " + args)
	}
	for _, f := range flags {
		n := f.Names()[0]
		if n == "help" || n == "version" { // urfave/cli's own, not the command's
			continue
		}
		if _, isBool := f.(*cli.BoolFlag); isBool {
			b.WriteString(" [--" + n + "]")
			continue
		}
		v := "V"
		if d, ok := f.(cli.DocGenerationFlag); ok {
			// The placeholder is the usage's `quoted` word, as in --help.
			if _, after, ok := strings.Cut(d.GetUsage(), "`"); ok {
				if p, _, ok := strings.Cut(after, "`"); ok && p != "" {
					v = p
				}
			}
		}
		b.WriteString(" [--" + n + " " + v + "]")
	}
	return b.String()
}

// invalidValue is urfave/cli's report of a flag value that did not parse:
// value, flag name, the parser's reason. Compiled on first use: a
// command's every run would pay for it, and only a bad flag needs it.
var invalidValue = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^invalid value "(.*)" for flag -([^:]+): (.*)$`)
})

// badFlagValue says what --name wants, with an example, instead of
// strconv's "parse error".
func badFlagValue(flags []cli.Flag, value, name, reason string) error {
	// A URL given to the wrong flag: shown without its password, here
	// and where the parser's reason quotes it. value is as %q quoted it.
	typed := value
	if s, err := strconv.Unquote(`"` + value + `"`); err == nil {
		typed = s
	}
	if shown := mailbox.Redact(typed); shown != typed {
		reason = redactTyped(reason, typed)
		value = shown
	}
	for _, f := range flags {
		if !slices.Contains(f.Names(), name) {
			continue
		}
		switch f.(type) {
		case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag, *cli.Uint64Flag:
			return fmt.Errorf("--%s %q: want a whole number, such as --%s 3", name, value, name)
		case *cli.Float64Flag:
			return fmt.Errorf("--%s %q: want a number, such as --%s 10 or --%s 2.5", name, value, name, name)
		}
	}
	return fmt.Errorf("--%s %q: %s", name, value, reason)
}

func flagNames(flags []cli.Flag) []string {
	var names []string
	for _, f := range flags {
		names = append(names, f.Names()...)
	}
	return append(names, "help")
}

// Nearest is the candidate closest to word by edit distance, if one is
// close enough to be a typo of it (at most 2 edits, fewer for short
// words), else "".
func Nearest(word string, candidates []string) string {
	best, dist := "", min(3, len(word))
	for _, c := range candidates {
		if d := editDistance(word, c); d < dist {
			best, dist = c, d
		}
	}
	return best
}

// report prints err as "name: error: …" (plus "name: hint: …") and maps it to
// an exit code.
func report(stderr io.Writer, name string, err error) int {
	if err == nil {
		return ExitOK
	}
	code, hint, quiet := ExitFailure, "", false
	var e *Error
	if errors.As(err, &e) {
		code, hint, quiet = e.Code, e.Hint, e.Quiet
	}
	if hint == "" {
		var h Hinter
		if errors.As(err, &h) {
			hint = h.Hint()
		}
	}
	if errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "%s: interrupted\n", name)
		if hint != "" {
			fmt.Fprintf(stderr, "%s: hint: %s\n", name, hint)
		}
		return ExitFailure
	}
	if !quiet {
		fmt.Fprintf(stderr, "%s: error: %s\n", name, text.OneLine(err.Error()))
		if hint != "" {
			fmt.Fprintf(stderr, "%s: hint: %s\n", name, hint)
		}
	}
	return code
}
