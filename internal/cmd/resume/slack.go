package resume

import (
	"context"
	"fmt"

	"github.com/teamkit/teamkit/internal/command"
	"github.com/teamkit/teamkit/pkg/escalate"
	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/slack"
)

// setupSlack wires the Slack channel into r: who may answer there (every
// pass), the bot that reads the answers and posts what a failed ask could
// not, and, for --watch with an app token, the Socket-Mode listener, whose
// events only ring the doorbell (wake the watch to read now). One client
// serves every pass, so a 429's Retry-After is kept from one to the next. A listener that Slack
// refuses for good (invalid_auth, a revoked token) calls abort, which ends
// the watch. The returned function stops the listener, waits for it, and
// returns why it gave up, if it did.
func setupSlack(ctx context.Context, abort func(), env *command.Env, db *mailbox.DB, r *escalate.Resumer, decidersSpec string, watch bool) func() error {
	answerers := env.Getenv(escalate.EnvSlackAnswerers)
	r.SlackPeople = func() (escalate.SlackPeople, error) {
		return escalate.ReadSlackPeople(decidersSpec, answerers, escalate.ReadListFile)
	}
	apiURL := env.Getenv(escalate.EnvSlackAPIURL)
	bot, app := env.Getenv(escalate.EnvSlackBotToken), env.Getenv(escalate.EnvSlackAppToken)
	r.SlackChannel = env.Getenv(escalate.EnvSlackChannel)
	listen := watch && app != ""
	if bot == "" && !listen {
		return func() error { return nil }
	}
	cl, err := slack.New(slack.Options{BotToken: bot, AppToken: app, APIURL: apiURL})
	if bot != "" {
		r.Slack = func() (escalate.Slack, error) { return cl, err }
	}
	if !listen {
		return func() error { return nil }
	}
	note := func(format string, args ...any) {
		fmt.Fprintf(env.Stderr, "resume: %s\n", fmt.Sprintf(format, args...))
	}
	if decidersSpec == "" && answerers == "" {
		note("warning: slack: no Slack answerers or deciders are configured (%s, %s or --slack-deciders): "+
			"nothing said in Slack will answer an ask", escalate.EnvSlackAnswerers, escalate.EnvSlackDeciders)
	}
	if bot == "" {
		note("warning: slack: %s is not set: the watch hears Slack's events but cannot read the answers they point to",
			escalate.EnvSlackBotToken)
	}
	if err != nil {
		abort()
		return func() error { return err }
	}
	wake := make(chan struct{}, 1)
	r.Wake = wake
	handler := escalate.SlackDoorbell(db, r.Team, func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	})
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
