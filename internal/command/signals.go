package command

import (
	"context"
	"os"
	"os/signal"
	"slices"
	"sync"
	"syscall"

	"github.com/urfave/cli/v2"
)

// Signals are caught only from the moment a command needs them. os/signal's
// first Notify starts two threads (one keeps the signal mask, one waits for
// signals): 0.1–0.3 ms of a 3 ms drain, and 0.7 ms of CPU, paid on every
// agent turn for a Ctrl-C that almost never comes.
// Before a command catches them, SIGINT and SIGTERM end it at once, as
// SIGKILL would: everything it stores is crash-safe (one transaction each,
// a drain's claim a lease that runs out), so nothing is lost, and a send
// reading its body from a terminal stops on the first Ctrl-C.
//
// A command catches them at its start, unless App.Quick names it; a quick
// one catches them where it waits or holds what an interruption must give
// back (CatchSignals): a drain once its claim holds messages, a --wait, a
// write to a reader that stalls (Interruptible).

// catcher is what Main puts in the command's context: the one arming of
// SIGINT and SIGTERM, which then end that context.
type catcher struct {
	once   sync.Once
	cancel context.CancelFunc
}

type catcherKey struct{}

// signalContext is the context Main runs a command in, and the cancel to
// call when the command is done. Nothing is caught until CatchSignals.
func signalContext() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	return context.WithValue(ctx, catcherKey{}, &catcher{cancel: cancel}), cancel
}

// CatchSignals makes SIGINT and SIGTERM end ctx from now on, once Main made
// ctx; under a test's context it does nothing. After the first signal the
// default action is back: a second Ctrl-C stops a command blocked where it
// cannot see ctx.
func CatchSignals(ctx context.Context) {
	c, ok := ctx.Value(catcherKey{}).(*catcher)
	if !ok {
		return
	}
	c.once.Do(func() {
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
		go func() {
			<-sigs
			c.cancel()
			signal.Stop(sigs)
		}()
	})
}

// catchAtStart makes every verb of a that quick does not name (and a's own
// action, unless quick names a) catch signals as it starts.
func catchAtStart(a *cli.App, quick []string) {
	wrap := func(name string, act cli.ActionFunc) cli.ActionFunc {
		if act == nil || slices.Contains(quick, name) {
			return act
		}
		return func(c *cli.Context) error {
			CatchSignals(c.Context)
			return act(c)
		}
	}
	a.Action = wrap(a.Name, a.Action)
	var walk func([]*cli.Command)
	walk = func(cmds []*cli.Command) {
		for _, cmd := range cmds {
			cmd.Action = wrap(cmd.Name, cmd.Action)
			walk(cmd.Subcommands)
		}
	}
	walk(a.Commands)
}
