package escalate

import (
	"context"
	"errors"
	"time"

	"github.com/teamkit/teamkit/pkg/text"
	"github.com/teamkit/teamkit/pkg/wait"
)

// The --watch loop: passes every interval, woken early by the mailbox, with
// backoff after failures and the pause switch re-read every iteration.

// Watch runs passes every interval until ctx ends. The pause switch is read
// before every pass, and a failure to read it counts as paused. A channel
// that fails (GitHub down, say) backs off alone (health.go), so the passes
// keep the interval for the other channels and for the answers already
// given; a pass in which something else failed (a re-spawn) doubles the
// wait before the next one, up to MaxBackoff, and a clean pass restores the
// interval. When the mailbox itself fails (the switch unreadable, or a pass
// ending with a database error) the next try comes sooner: DBRetryStart,
// doubling up to the interval (or MaxBackoff, if shorter), so the answers
// that arrived in Slack during an outage are read soon after it ends. It
// returns nil when ctx ends.
func (r *Resumer) Watch(ctx context.Context, interval time.Duration) error {
	sleep := r.Sleep
	if sleep == nil {
		sleep = wait.Sleep
	}
	ceiling := max(MaxBackoff, interval)
	wait := interval
	r.mu.Lock()
	r.watching, r.interval = true, interval
	r.mu.Unlock()
	wasPaused := false
	var dbWait time.Duration // the last wait after a mailbox failure; 0 once it works
	dbRetry := func() time.Duration {
		dbWait = min(max(dbWait*2, DBRetryStart), interval, MaxBackoff)
		return dbWait
	}
	for {
		paused, perr := Paused(ctx, r.DB, r.Team)
		switch {
		case ctx.Err() != nil:
			return nil
		case perr != nil:
			r.note("cannot read the pause switch of team %s, so treating it as paused: %s", r.Team, text.OneLine(perr.Error()))
			wait, wasPaused = dbRetry(), true
		case paused:
			dbWait = 0
			if !wasPaused {
				r.note("team %s is paused; not resuming until 'resume unpause %s'", r.Team, r.Team)
			}
			wait, wasPaused = interval, true
		default:
			if wasPaused {
				r.note("team %s is no longer paused", r.Team)
			}
			wasPaused = false
			err := r.Once(ctx)
			if ctx.Err() != nil {
				return nil
			}
			var failed *FailedError
			switch {
			case err == nil, errors.Is(err, ErrPaused):
				wait, dbWait = interval, 0
			case errors.Is(err, ErrLockHeld):
				r.note("another resume of team %s is running; skipping this pass", r.Team)
				wait, dbWait = interval, 0
			case errors.As(err, &failed) && failed.Count == failed.Channel:
				// Only channels failed: each backs off alone.
				wait, dbWait = interval, 0
			case errors.As(err, &failed):
				dbWait = 0
				wait = min(wait*2, ceiling)
				r.note("pass failed; next pass in %s", wait)
			default:
				r.note("error: %s", text.OneLine(err.Error()))
				wait = dbRetry()
				r.note("pass failed; next pass in %s", wait)
			}
		}
		r.sleepOrWake(ctx, sleep, wait)
		if ctx.Err() != nil {
			return nil
		}
	}
}

// DBRetryStart is the first wait of Watch after the mailbox failed.
const DBRetryStart = time.Second

// sleepOrWake waits d, or until ctx ends or Wake fires.
func (r *Resumer) sleepOrWake(ctx context.Context, sleep func(context.Context, time.Duration) error, d time.Duration) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if r.Wake != nil {
		go func() {
			select {
			case <-r.Wake:
				cancel()
			case <-sctx.Done():
			}
		}()
	}
	sleep(sctx, d)
}
