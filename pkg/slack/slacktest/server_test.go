package slacktest

import (
	"context"
	"errors"
	"testing"
	"time"

	slackgo "github.com/slack-go/slack"
)

// The stand-in answers slack-go's own client as Slack does: the shapes it
// parses, and the errors it tells apart.
func TestWebAPIShapes(t *testing.T) {
	s := NewServer()
	defer s.Close()
	ctx := context.Background()
	bot := slackgo.New(BotToken, slackgo.OptionAPIURL(s.APIURL()))
	id, err := bot.AuthTestContext(ctx)
	if err != nil || id.UserID != BotUser || id.BotID != BotID || id.TeamID != TeamID {
		t.Fatalf("auth.test %+v %v", id, err)
	}
	var se slackgo.SlackErrorResponse
	if _, err := slackgo.New("xoxb-wrong", slackgo.OptionAPIURL(s.APIURL())).AuthTestContext(ctx); !errors.As(err, &se) || se.Err != "invalid_auth" {
		t.Errorf("a wrong token: %v", err)
	}
	if _, _, err := slackgo.New(BotToken, slackgo.OptionAPIURL(s.APIURL()), slackgo.OptionAppLevelToken(BotToken)).StartSocketModeContext(ctx); err == nil || err.Error() != "not_allowed_token_type" {
		t.Errorf("a bot token opening a socket: %v", err)
	}
	if _, _, err := bot.PostMessageContext(ctx, "C0NOWHERE", slackgo.MsgOptionText("hi", false)); err == nil || err.Error() != "channel_not_found" {
		t.Errorf("an unknown channel: %v", err)
	}
	md := slackgo.SlackMetadata{EventType: "teamkit_ask", EventPayload: map[string]any{"ask_id": "1"}}
	ch, ts, err := bot.PostMessageContext(ctx, "#"+ChannelName, slackgo.MsgOptionText("Which colour?", false), slackgo.MsgOptionMetadata(md))
	if err != nil || ch != Channel || len(ts) != len("1764000000.000100") {
		t.Fatalf("chat.postMessage %q %q %v", ch, ts, err)
	}
	h, err := bot.GetConversationHistoryContext(ctx, &slackgo.GetConversationHistoryParameters{ChannelID: Channel})
	if err != nil || len(h.Messages) != 1 || h.Messages[0].Metadata.EventType != "" || h.Messages[0].BotID != BotID {
		t.Fatalf("history without metadata: %+v %v", h, err)
	}
	h, err = bot.GetConversationHistoryContext(ctx, &slackgo.GetConversationHistoryParameters{ChannelID: Channel, IncludeAllMetadata: true})
	if err != nil || h.Messages[0].Metadata.EventType != "teamkit_ask" || h.Messages[0].Timestamp != ts {
		t.Fatalf("history with metadata: %+v %v", h, err)
	}

	s.Fail(Failure{Method: "auth.test", Status: 429, RetryAfter: 7, Count: 1})
	var rl *slackgo.RateLimitedError
	if _, err := bot.AuthTestContext(ctx); !errors.As(err, &rl) || rl.RetryAfter != 7*time.Second {
		t.Errorf("rate limited: %v", err)
	}
	s.Fail(Failure{Method: "auth.test", Status: 503, Count: 1})
	var sc slackgo.StatusCodeError
	if _, err := bot.AuthTestContext(ctx); !errors.As(err, &sc) || sc.Code != 503 {
		t.Errorf("503: %v", err)
	}
	if _, err := bot.AuthTestContext(ctx); err != nil {
		t.Errorf("after the failures: %v", err)
	}
	reqs := s.Requests()
	if last := reqs[len(reqs)-1]; last.Method != "auth.test" || last.Status != 200 {
		t.Errorf("log %+v", reqs)
	}
}
