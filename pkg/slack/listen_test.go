package slack

import (
	"encoding/json"
	"testing"

	"github.com/slack-go/slack/slackevents"

	"github.com/teamkit/teamkit/internal/slacktest"
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

// Every change that could change a decision rings: a reaction added or
// removed on a message, a person's reply in a thread posted, edited or
// deleted. Bots' replies, joins, top-level messages, the parent itself and
// reactions on files do not.
func TestFromEvent(t *testing.T) {
	const ch, q = "C1", "1764000000.000100"
	removed := slacktest.Reaction("U1", "white_check_mark", ch, q, "1764000001.000200")
	removed["type"] = "reaction_removed"
	broadcast := slacktest.Reply("U2", "Blue, and to the channel.", ch, q, "1764000003.000100")
	broadcast["subtype"] = "thread_broadcast"
	deleted := map[string]any{"type": "message", "subtype": "message_deleted", "hidden": true, "channel": ch,
		"ts": "1764000002.000100", "deleted_ts": "1764000002.000100",
		"previous_message": map[string]any{"type": "message", "user": "U2", "text": "Blue.", "ts": "1764000002.000100", "thread_ts": q}}
	keep := []struct {
		ev   map[string]any
		want Event
	}{
		{slacktest.Reaction("U1", "white_check_mark", ch, q, "1764000001.000100"), Event{What: "reaction_added", Channel: ch, On: q}},
		{removed, Event{What: "reaction_removed", Channel: ch, On: q}},
		{slacktest.Reply("U2", "Blue.", ch, q, "1764000002.000100"), Event{What: "reply", Channel: ch, On: q}},
		{broadcast, Event{What: "reply", Channel: ch, On: q}},
		{slacktest.Edit("U2", "Green.", ch, q, "1764000002.000100"), Event{What: "reply_changed", Channel: ch, On: q}},
		{deleted, Event{What: "reply_deleted", Channel: ch, On: q}},
	}
	for _, k := range keep {
		got, ok := FromEvent(parse(t, k.ev))
		if !ok || got != k.want {
			t.Errorf("FromEvent(%v) = %+v, %v; want %+v", k.ev, got, ok, k.want)
		}
	}
	topLevel := slacktest.Reply("U2", "Unrelated.", ch, "", "1764000005.000100")
	delete(topLevel, "thread_ts")
	root := slacktest.Reply("U2", "A parent.", ch, "1764000006.000100", "1764000006.000100")
	file := slacktest.Reaction("U1", "white_check_mark", ch, q, "1764000007.000100")
	file["item"] = map[string]any{"type": "file", "file": map[string]any{"id": "F1"}}
	topDeleted := map[string]any{"type": "message", "subtype": "message_deleted", "hidden": true, "channel": ch,
		"ts": "1764000005.000100", "deleted_ts": "1764000005.000100",
		"previous_message": map[string]any{"type": "message", "user": "U2", "text": "Unrelated.", "ts": "1764000005.000100"}}
	drop := map[string]map[string]any{
		"bot":             slacktest.BotReply("B1", "U9", ":white_check_mark:", ch, q, "1764000008.000100"),
		"join":            slacktest.Join("U3", ch, "1764000009.000100"),
		"top-level":       topLevel,
		"top-level gone":  topDeleted,
		"root":            root,
		"file":            file,
		"the parent edit": slacktest.Edit("U0BOT", "Question, edited.", ch, q, q),
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
