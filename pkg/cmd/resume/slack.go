package resume

import (
	"context"
	"fmt"

	"github.com/teamkit/teamkit/pkg/command"
	"github.com/teamkit/teamkit/pkg/escalate"
	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/slack"
)

// setupSlack wires the Slack channel into r: who may answer there (every
// pass), the bot that posts what a failed ask could not, and, for --watch
// with an app token, the Socket-Mode listener. A listener that Slack
// refuses for good (invalid_auth, a revoked token) calls abort, which ends
// the watch. The returned function stops the listener, waits for it, and
// returns why it gave up, if it did.
func setupSlack(ctx context.Context, abort func(), env *command.Env, db *mailbox.DB, r *escalate.Resumer, decidersSpec string, watch bool) func() error {
	answerers := env.Getenv(escalate.EnvSlackAnswerers)
	r.SlackPeople = func() (escalate.SlackPeople, error) {
		return escalate.ReadSlackPeople(decidersSpec, answerers, escalate.ReadListFile)
	}
	apiURL := env.Getenv(escalate.EnvSlackAPIURL)
	bot, channel := env.Getenv(escalate.EnvSlackBotToken), env.Getenv(escalate.EnvSlackChannel)
	if bot != "" && channel != "" {
		r.SlackChannel = channel
		r.Slack = func() (escalate.Slack, error) {
			if err := slack.CheckChannel(channel); err != nil {
				return nil, err
			}
			return slack.New(slack.Options{BotToken: bot, APIURL: apiURL})
		}
	}
	app := env.Getenv(escalate.EnvSlackAppToken)
	if !watch || app == "" {
		return func() error { return nil }
	}
	note := func(format string, args ...any) {
		fmt.Fprintf(env.Stderr, "resume: %s\n", fmt.Sprintf(format, args...))
	}
	if decidersSpec == "" && answerers == "" {
		note("warning: slack: no Slack answerers or deciders are configured (%s, %s or --slack-deciders): "+
			"nothing said in Slack will answer an ask", escalate.EnvSlackAnswerers, escalate.EnvSlackDeciders)
	}
	cl, err := slack.New(slack.Options{BotToken: bot, AppToken: app, APIURL: apiURL})
	if err != nil {
		abort()
		return func() error { return err }
	}
	wake := make(chan struct{}, 1)
	r.Wake = wake
	handler := escalate.SlackHandler(db, r.Team, func() {
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
