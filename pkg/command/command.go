// Package command is the small runtime the six teamkit commands share, so they
// behave as one toolkit: injected streams, environment and clock (every command
// runs in-process under test), flags accepted before or after positional
// arguments, the exit codes 0/1/2/64, one-line errors with an optional hint,
// mailbox selection (--db, TEAMKIT_DB, the XDG default) and identity taken from
// the variables spawn exports.
//
// Nothing in pkg/ calls os.Exit, reads os.Getenv or writes os.Stdout directly;
// only Main, called from each cmd/<name>/main.go, touches the real process.
package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"
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

// Usagef is a usage error (exit 64).
func Usagef(format string, args ...any) error {
	return &Error{Code: ExitUsage, Err: fmt.Errorf(format, args...)}
}

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
}

// Main runs app as the real process and returns the exit code for os.Exit.
func Main(app App) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// After the first signal, the default action again: a second Ctrl-C
	// stops a command that is blocked where it cannot see ctx.
	go func() { <-ctx.Done(); stop() }()
	return Run(ctx, app, OS(), os.Args)
}

// Run runs app with args (args[0] is the program name) and returns the exit
// code. It never exits the process.
func Run(ctx context.Context, app App, env *Env, args []string) int {
	a := app.Build(env)
	a.Reader = env.Stdin
	a.Writer = env.Stdout
	a.ErrWriter = env.Stderr
	a.HideHelpCommand = true
	a.HideVersion = true
	a.ExitErrHandler = func(*cli.Context, error) {} // exit codes are ours to map
	a.OnUsageError = usageError
	for _, c := range a.Commands {
		setUsageError(c)
	}
	if a.Action == nil && len(a.Commands) > 0 {
		// Without this, urfave/cli answers a mistyped verb with "No help
		// topic" and exit 1; it is a usage error.
		a.Action = func(c *cli.Context) error {
			if c.NArg() > 0 {
				return Usagef("unknown command %q (want %s)", c.Args().First(), verbs(a.Commands))
			}
			return WithHint(Usagef("missing command (want %s)", verbs(a.Commands)), "run '"+a.Name+" --help'")
		}
	}
	name := a.Name
	err := a.RunContext(ctx, normalize(a, app.Default, args))
	return report(env.Stderr, name, err)
}

func verbs(cmds []*cli.Command) string {
	var names []string
	for _, c := range cmds {
		if !c.Hidden {
			names = append(names, c.Name)
		}
	}
	return strings.Join(names, ", ")
}

func setUsageError(c *cli.Command) {
	c.OnUsageError = usageError
	for _, s := range c.Subcommands {
		setUsageError(s)
	}
}

func usageError(c *cli.Context, err error, _ bool) error {
	hint := fmt.Sprintf("run '%s --help'", strings.TrimSpace(c.Command.HelpName))
	if c.Command.HelpName == "" {
		hint = fmt.Sprintf("run '%s --help'", c.App.Name)
	}
	return &Error{Code: ExitUsage, Err: err, Hint: hint}
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
		return ExitFailure
	}
	if !quiet {
		fmt.Fprintf(stderr, "%s: error: %s\n", name, oneLine(err.Error()))
		if hint != "" {
			fmt.Fprintf(stderr, "%s: hint: %s\n", name, hint)
		}
	}
	return code
}

// oneLine keeps an error on one line however deeply it was wrapped.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}
