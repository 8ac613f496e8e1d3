package slack

import (
	"encoding/json"
	"testing"

	"github.com/slack-go/slack/slackevents"

	"github.com/teamkit/teamkit/pkg/slack/slacktest"
)

func parse(t *testing.T, ev map[string]any) slackevents.EventsAPIEvent {
	t.Helper()
	raw, _ := json.Marshal(map[string]any{"type": "event_callback", "team_id": "T1", "api_app_id": "A1", "event": ev, "event_id": "Ev1"})
	e, err := slackevents.ParseEvent(raw, slackevents.OptionNoVerifyToken())
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// Only a person's reaction on a message and a person's reply in a thread
// become Events; bots, edits, deletions, joins, top-level messages and other
// reactions' items do not.
func TestFromEvent(t *testing.T) {
	const ch, q = "C1", "1764000000.000100"
	keep := []struct {
		ev   map[string]any
		want Event
	}{
		{slacktest.Reaction("U1", "white_check_mark", ch, q, "1764000001.000100"),
			Event{Kind: KindReaction, User: "U1", Reaction: "white_check_mark", Channel: ch, On: q, TS: "1764000001.000100", Key: "reaction/U1/white_check_mark"}},
		{slacktest.Reply("U2", "Blue.", ch, q, "1764000002.000100"),
			Event{Kind: KindReply, User: "U2", Text: "Blue.", Channel: ch, On: q, TS: "1764000002.000100", Key: "reply/1764000002.000100"}},
	}
	for _, k := range keep {
		got, ok := FromEvent(parse(t, k.ev))
		if !ok || got != k.want {
			t.Errorf("FromEvent(%v) = %+v, %v; want %+v", k.ev, got, ok, k.want)
		}
	}
	broadcast := slacktest.Reply("U2", "Blue, and to the channel.", ch, q, "1764000003.000100")
	broadcast["subtype"] = "thread_broadcast"
	if _, ok := FromEvent(parse(t, broadcast)); !ok {
		t.Error("a thread_broadcast reply was dropped")
	}
	deleted := map[string]any{"type": "message", "subtype": "message_deleted", "channel": ch, "ts": "1764000004.000100", "deleted_ts": q}
	topLevel := slacktest.Reply("U2", "Unrelated.", ch, "", "1764000005.000100")
	delete(topLevel, "thread_ts")
	root := slacktest.Reply("U2", "A parent.", ch, "1764000006.000100", "1764000006.000100")
	file := slacktest.Reaction("U1", "white_check_mark", ch, q, "1764000007.000100")
	file["item"] = map[string]any{"type": "file", "file": map[string]any{"id": "F1"}}
	drop := map[string]map[string]any{
		"edit":      slacktest.Edit("U2", "approved", ch, q, "1764000002.000100"),
		"bot":       slacktest.BotReply("B1", "U9", ":white_check_mark:", ch, q, "1764000008.000100"),
		"join":      slacktest.Join("U3", ch, "1764000009.000100"),
		"deleted":   deleted,
		"top-level": topLevel,
		"root":      root,
		"file":      file,
	}
	for name, ev := range drop {
		if got, ok := FromEvent(parse(t, ev)); ok {
			t.Errorf("%s: kept %+v", name, got)
		}
	}
}

func TestNewRejectsBadURL(t *testing.T) {
	for _, u := range []string{"ftp://slack.example/", "slack.com/api", "http://"} {
		if _, err := New(Options{APIURL: u}); err == nil {
			t.Errorf("New accepted %q", u)
		}
	}
	c, err := New(Options{APIURL: "http://127.0.0.1:9/api"})
	if err != nil || c.BaseURL() != "http://127.0.0.1:9/api/" {
		t.Errorf("BaseURL %q, %v", c.BaseURL(), err)
	}
}
