package resume

import (
	"context"
	"fmt"
	"strings"

	"github.com/teamkit/teamkit/internal/command"
	"github.com/teamkit/teamkit/pkg/escalate"
	"github.com/teamkit/teamkit/pkg/mailbox"
)

// listenSlack starts, for a watch with an app token, the Socket-Mode
// listener, whose events only ring the doorbell (ring) (wake the watch to read
// now); the Slack channel itself reads and posts through r.Channels, with
// the same client (cfg.Slack). A listener that Slack refuses for good
// (invalid_auth, a token of the wrong kind) calls abort, which ends the
// watch. The returned function stops the listener, waits for it, and
// returns why it gave up, if it did.
func listenSlack(ctx context.Context, abort func(), env *command.Env, db *mailbox.DB, r *escalate.Resumer, cfg *escalate.Config, ring func()) func() error {
	if cfg.SlackAppToken == "" {
		return func() error { return nil }
	}
	note := func(format string, args ...any) {
		fmt.Fprintf(env.Stderr, "resume: %s\n", fmt.Sprintf(format, args...))
	}
	if cfg.SlackDeciders == "" && cfg.SlackAnswerers == "" {
		note("warning: slack: no Slack answerers or deciders are configured (%s, %s or --slack-deciders): "+
			"nothing said in Slack will answer an ask", escalate.EnvSlackAnswerers, escalate.EnvSlackDeciders)
	}
	if cfg.SlackBotToken == "" {
		note("warning: slack: %s is not set: the watch hears Slack's events but cannot read the answers they point to",
			escalate.EnvSlackBotToken)
	}
	cl, err := cfg.Slack()
	if err != nil {
		abort()
		return func() error { return err }
	}
	handler := escalate.SlackDoorbell(db, r.Team, ring)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		err := cl.Listen(ctx, handler, note)
		if err != nil {
			abort()
		}
		done <- err
	}()
	return func() error { cancel(); return <-done }
}

// appTokenHint says what to check when the listener gave up with err.
func appTokenHint(err error) string {
	if strings.Contains(err.Error(), "not_allowed_token_type") {
		return escalate.SlackTokenHint("not_allowed_token_type")
	}
	return "check " + escalate.EnvSlackAppToken + ": an app-level token (xapp-…) with connections:write, of an app with Socket Mode on"
}
