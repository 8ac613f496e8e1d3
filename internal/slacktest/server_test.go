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

// reactions.get and conversations.replies as slack-go parses them: only a
// few users of a reaction without full=true (the count always whole), the
// thread as it stands (an edit's new text, a deletion gone), Slack's error
// codes, and a per-method budget answering 429 with Retry-After.
func TestReadShapes(t *testing.T) {
	s := NewServer()
	defer s.Close()
	ctx := context.Background()
	bot := slackgo.New(BotToken, slackgo.OptionAPIURL(s.APIURL()))
	_, q, err := bot.PostMessageContext(ctx, Channel, slackgo.MsgOptionText("Deploy?", false))
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"U1", "U2", "U3", "U4", "U5"} {
		if s.React(u, "white_check_mark", Channel, q) == "" {
			t.Fatal("no event for a new reaction")
		}
	}
	if s.React("U1", "white_check_mark", Channel, q) != "" || s.Unreact("U9", "x", Channel, q) != "" {
		t.Error("an event for a change that changed nothing")
	}
	item := slackgo.ItemRef{Channel: Channel, Timestamp: q}
	some, err := bot.GetReactionsContext(ctx, item, slackgo.GetReactionsParameters{})
	if err != nil || len(some.Reactions) != 1 || some.Reactions[0].Count != 5 || len(some.Reactions[0].Users) != partialUsers {
		t.Fatalf("reactions.get: %+v %v", some, err)
	}
	all, err := bot.GetReactionsContext(ctx, item, slackgo.GetReactionsParameters{Full: true})
	if err != nil || len(all.Reactions[0].Users) != 5 {
		t.Fatalf("reactions.get full: %+v %v", all, err)
	}
	if _, err := bot.GetReactionsContext(ctx, slackgo.ItemRef{Channel: Channel, Timestamp: "1.000001"}, slackgo.GetReactionsParameters{}); err == nil || err.Error() != "message_not_found" {
		t.Errorf("reactions.get of no message: %v", err)
	}

	r1, _ := s.PostReply("U1", "Red.", Channel, q)
	r2, _ := s.PostReply("U2", "Blue.", Channel, q)
	s.EditReply(Channel, r2, "Green.")
	s.DeleteReply(Channel, r1)
	msgs, more, _, err := bot.GetConversationRepliesContext(ctx, &slackgo.GetConversationRepliesParameters{ChannelID: Channel, Timestamp: q})
	if err != nil || more || len(msgs) != 2 || msgs[0].Timestamp != q || msgs[0].ReplyCount != 1 || msgs[1].Text != "Green." || msgs[1].Edited == nil {
		t.Fatalf("conversations.replies: %+v %v", msgs, err)
	}
	if _, _, _, err := bot.GetConversationRepliesContext(ctx, &slackgo.GetConversationRepliesParameters{ChannelID: Channel, Timestamp: "1.000001"}); err == nil || err.Error() != "thread_not_found" {
		t.Errorf("conversations.replies of no thread: %v", err)
	}

	s.Limit("reactions.get", 1, time.Minute)
	if _, err := bot.GetReactionsContext(ctx, item, slackgo.GetReactionsParameters{}); err != nil {
		t.Fatal(err)
	}
	var rl *slackgo.RateLimitedError
	if _, err := bot.GetReactionsContext(ctx, item, slackgo.GetReactionsParameters{}); !errors.As(err, &rl) || rl.RetryAfter < time.Second || rl.RetryAfter > time.Minute {
		t.Errorf("over budget: %v", err)
	}
	s.Limit("reactions.get", 0, 0)
	if _, err := bot.GetReactionsContext(ctx, item, slackgo.GetReactionsParameters{}); err != nil {
		t.Errorf("budget removed: %v", err)
	}
}
