package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"

	slackgo "github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"github.com/teamkit/teamkit/pkg/text"
)

// Kinds of Event.
const (
	KindReaction = "reaction"
	KindReply    = "reply"
)

// Event is a person's reaction on a message, or their reply in a thread, as
// Socket Mode delivered it. Only these two reach a Handler: bot messages
// (teamkit's own included), edits, deletions, joins and every other message
// subtype are dropped by FromEvent.
type Event struct {
	Kind     string // KindReaction or KindReply
	User     string // Slack user ID
	Reaction string // KindReaction: the emoji name, e.g. "white_check_mark"
	Text     string // KindReply: the reply's text
	Channel  string
	// On is the ts of the message the event concerns: the reacted-to
	// message, or the thread's parent for a reply.
	On string
	// TS orders events: the reply's ts, or the reaction's event_ts.
	TS string
	// Key identifies the event across redeliveries.
	Key string
}

// FromEvent reduces an Events API event to an Event; ok is false for
// everything that is not a person's reaction on a message or reply in a
// thread.
func FromEvent(e slackevents.EventsAPIEvent) (Event, bool) {
	if e.Type != slackevents.CallbackEvent {
		return Event{}, false
	}
	switch ev := e.InnerEvent.Data.(type) {
	case *slackevents.ReactionAddedEvent:
		if ev.User == "" || ev.Item.Type != "message" || ev.Item.Channel == "" || ev.Item.Timestamp == "" || ev.Reaction == "" {
			return Event{}, false
		}
		return Event{
			Kind: KindReaction, User: ev.User, Reaction: ev.Reaction, Channel: ev.Item.Channel, On: ev.Item.Timestamp,
			TS: ev.EventTimestamp, Key: "reaction/" + ev.User + "/" + ev.Reaction,
		}, true
	case *slackevents.MessageEvent:
		// A plain message has no subtype; "thread_broadcast" is a reply
		// also sent to the channel. Everything else (message_changed,
		// message_deleted, channel_join, bot_message, …) is not a person
		// replying.
		if ev.SubType != "" && ev.SubType != "thread_broadcast" {
			return Event{}, false
		}
		if ev.BotID != "" || ev.User == "" || ev.Channel == "" || ev.TimeStamp == "" ||
			ev.ThreadTimeStamp == "" || ev.ThreadTimeStamp == ev.TimeStamp {
			return Event{}, false
		}
		return Event{
			Kind: KindReply, User: ev.User, Text: ev.Text, Channel: ev.Channel, On: ev.ThreadTimeStamp,
			TS: ev.TimeStamp, Key: "reply/" + ev.TimeStamp,
		}, true
	}
	return Event{}, false
}

// Handler judges one Event. It returns nil once the event is durably
// recorded, or known to matter to nobody; only then is its envelope
// acknowledged. An error leaves it unacknowledged, so Slack delivers it
// again.
type Handler func(ctx context.Context, e Event) error

// Listen holds a Socket-Mode connection until ctx ends, calling handle for
// each Event, one at a time, and acknowledging each envelope only after
// handle returned nil for it. Envelopes that carry no Event (other event
// types, bots, edits) are acknowledged at once. A malformed envelope is
// reported through notef and acknowledged when it has an envelope_id (a
// second delivery would be as malformed); it never drops the connection.
//
// Reconnecting (after a disconnect envelope, a dropped socket, a missed
// ping) is socketmode's own loop with its backoff. Listen returns nil when
// ctx ends, or the error that made socketmode give up (invalid_auth, a
// revoked token).
func (c *Client) Listen(ctx context.Context, handle Handler, notef func(format string, args ...any)) error {
	sm := socketmode.New(c.app, socketmode.OptionLog(log.New(io.Discard, "", 0)))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- sm.RunContext(ctx) }()
	connected := false
	for {
		select {
		case err := <-done:
			if ctx.Err() != nil || errors.Is(err, context.Canceled) {
				return nil
			}
			return apiError("apps.connections.open", err)
		case evt := <-sm.Events:
			switch evt.Type {
			case socketmode.EventTypeConnected:
				if !connected {
					notef("slack: connected (Socket Mode)")
				}
				connected = true
			case socketmode.EventTypeConnectionError:
				if ce, ok := evt.Data.(*slackgo.ConnectionErrorEvent); ok {
					notef("warning: slack: connection failed (attempt %d): %s; retrying in %s",
						ce.Attempt, text.OneLine(apiError("apps.connections.open", ce.ErrorObj).Error()), ce.Backoff.Round(1e6))
				}
			case socketmode.EventTypeIncomingError:
				if ie, ok := evt.Data.(*slackgo.IncomingEventError); ok {
					var se *json.SyntaxError
					var te *json.UnmarshalTypeError
					if errors.As(ie.ErrorObj, &se) || errors.As(ie.ErrorObj, &te) {
						notef("warning: slack: unreadable frame skipped: %s", text.OneLine(ie.ErrorObj.Error()))
					} else if ctx.Err() == nil {
						notef("warning: slack: connection lost (%s); reconnecting", text.OneLine(ie.ErrorObj.Error()))
					}
				}
			case socketmode.EventTypeErrorBadMessage:
				bad, _ := evt.Data.(*socketmode.ErrorBadMessage)
				c.skipBad(ctx, sm, bad, notef)
			case socketmode.EventTypeEventsAPI:
				c.dispatch(ctx, sm, evt, handle, notef)
			case socketmode.EventTypeSlashCommand, socketmode.EventTypeInteractive:
				// Not teamkit's: acknowledge so Slack does not retry.
				if evt.Request != nil && evt.Request.EnvelopeID != "" {
					sm.AckCtx(ctx, evt.Request.EnvelopeID, nil)
				}
			}
		case <-ctx.Done():
			<-done
			return nil
		}
	}
}

func (c *Client) dispatch(ctx context.Context, sm *socketmode.Client, evt socketmode.Event, handle Handler, notef func(string, ...any)) {
	if evt.Request == nil {
		return
	}
	env := evt.Request.EnvelopeID
	api, ok := evt.Data.(slackevents.EventsAPIEvent)
	if ok {
		if e, ok := FromEvent(api); ok {
			if err := handle(ctx, e); err != nil {
				// Unacknowledged: Slack delivers it again.
				notef("error: slack: event %s not recorded, so not acknowledged (Slack delivers it again): %s", env, text.OneLine(err.Error()))
				return
			}
		}
	}
	if env != "" {
		if err := sm.AckCtx(ctx, env, nil); err != nil && ctx.Err() == nil {
			notef("warning: slack: acknowledge %s: %s", env, text.OneLine(err.Error()))
		}
	}
}

// skipBad reports a malformed envelope and acknowledges it if it has an id.
func (c *Client) skipBad(ctx context.Context, sm *socketmode.Client, bad *socketmode.ErrorBadMessage, notef func(string, ...any)) {
	if bad == nil {
		return
	}
	var env struct {
		EnvelopeID string `json:"envelope_id"`
	}
	json.Unmarshal(bad.Message, &env)
	id := env.EnvelopeID
	if id == "" {
		id = "(no envelope_id)"
	}
	notef("warning: slack: malformed envelope %s skipped: %s", id, text.OneLine(fmt.Sprint(bad.Cause)))
	if env.EnvelopeID != "" {
		sm.AckCtx(ctx, env.EnvelopeID, nil)
	}
}
