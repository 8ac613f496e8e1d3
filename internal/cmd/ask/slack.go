package ask

import (
	"context"
	"fmt"

	"github.com/teamkit/teamkit/internal/command"
	"github.com/teamkit/teamkit/pkg/escalate"
	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/slack"
	"github.com/teamkit/teamkit/pkg/text"
)

// mirrorSlack posts ask a to TEAMKIT_SLACK_CHANNEL with the bot token, when
// both are set, and returns the ask as recorded after. It is a mirror: a
// failure is a warning (recorded on the ask, so resume posts it later),
// never a failed ask.
func mirrorSlack(ctx context.Context, env *command.Env, db *mailbox.DB, a mailbox.Ask, created bool) mailbox.Ask {
	token, channel := env.Getenv(escalate.EnvSlackBotToken), env.Getenv(escalate.EnvSlackChannel)
	if token == "" && channel == "" || a.SlackTS != "" {
		return a
	}
	warn := func(format string, args ...any) {
		fmt.Fprintf(env.Stderr, "ask: warning: %s (the ask itself is fine)\n", fmt.Sprintf(format, args...))
	}
	if token == "" || channel == "" {
		warn("slack: set both %s and %s to post questions to Slack; not posting", escalate.EnvSlackBotToken, escalate.EnvSlackChannel)
		return a
	}
	if err := slack.CheckChannel(channel); err != nil {
		warn("slack: %s; not posting", err)
		return a
	}
	// The lists only shape the message (who to mention); resume judges.
	people, _ := escalate.ReadSlackPeople(env.Getenv(escalate.EnvSlackDeciders), env.Getenv(escalate.EnvSlackAnswerers), escalate.ReadListFile)
	cl, err := slack.New(slack.Options{BotToken: token, APIURL: env.Getenv(escalate.EnvSlackAPIURL)})
	if err == nil {
		var posted mailbox.Ask
		if posted, err = escalate.PostSlack(ctx, db, cl, channel, people, a, created); err == nil {
			return posted
		}
	} else if rerr := db.SetAskSlackError(ctx, a.ID, text.OneLine(err.Error())); rerr != nil {
		warn("%s", text.OneLine(rerr.Error()))
	}
	warn("%s; resume posts it to Slack later, once", text.OneLine(err.Error()))
	if again, rerr := db.Ask(ctx, a.ID); rerr == nil {
		return again
	}
	return a
}
