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

// Event is a doorbell: something changed on a message or in its thread (a
// reaction added or removed, a reply posted, edited or deleted). It says
// where, never what: a decision is read from the Web API as it stands
// (Reactions, Replies), so an event that is forged, stale, redelivered or
// lost changes no answer.
type Event struct {
	// What happened, for logs: "reaction_added", "reaction_removed",
	// "reply", "reply_changed" or "reply_deleted".
	What    string
	Channel string
	// On is the ts of the message concerned: the reacted-to message, or
	// the thread's parent for a reply.
	On string
}

// FromEvent reduces an Events API event to an Event; ok is false for
// everything that cannot change a decision: bots' replies (teamkit's own
// included), top-level messages, joins and other subtypes, reactions on
// files.
func FromEvent(e slackevents.EventsAPIEvent) (Event, bool) {
	if e.Type != slackevents.CallbackEvent {
		return Event{}, false
	}
	reaction := func(what string, it slackevents.Item) (Event, bool) {
		if it.Type != "message" || it.Channel == "" || it.Timestamp == "" {
			return Event{}, false
		}
		return Event{What: what, Channel: it.Channel, On: it.Timestamp}, true
	}
	inThread := func(m *slackgo.Msg) bool {
		return m != nil && m.ThreadTimestamp != "" && m.ThreadTimestamp != m.Timestamp
	}
	switch ev := e.InnerEvent.Data.(type) {
	case *slackevents.ReactionAddedEvent:
		return reaction("reaction_added", ev.Item)
	case *slackevents.ReactionRemovedEvent:
		return reaction("reaction_removed", ev.Item)
	case *slackevents.MessageEvent:
		if ev.Channel == "" {
			return Event{}, false
		}
		switch ev.SubType {
		case "", "thread_broadcast":
			// A plain message has no subtype; "thread_broadcast" is a
			// reply also sent to the channel.
			if ev.BotID != "" || ev.User == "" || ev.TimeStamp == "" ||
				ev.ThreadTimeStamp == "" || ev.ThreadTimeStamp == ev.TimeStamp {
				return Event{}, false
			}
			return Event{What: "reply", Channel: ev.Channel, On: ev.ThreadTimeStamp}, true
		case "message_changed":
			if !inThread(ev.Message) {
				return Event{}, false
			}
			return Event{What: "reply_changed", Channel: ev.Channel, On: ev.Message.ThreadTimestamp}, true
		case "message_deleted":
			if !inThread(ev.PreviousMessage) {
				return Event{}, false
			}
			return Event{What: "reply_deleted", Channel: ev.Channel, On: ev.PreviousMessage.ThreadTimestamp}, true
		}
	}
	return Event{}, false
}

// Handler rings the doorbell for one Event. It must be quick: Slack wants
// an envelope acknowledged within 3 seconds.
type Handler func(ctx context.Context, e Event)

// Listen holds a Socket-Mode connection until ctx ends, calling handle for
// each Event, one at a time, and acknowledging every envelope once handle
// returned. An event is acknowledged even when nothing could be done with
// it (the mailbox down, say): it is a doorbell, and the record is Slack's
// own, which every resume pass reads again for every awaiting ask, so a
// redelivery would add nothing and an unacknowledged envelope only makes
// Slack retry and count failures. A malformed envelope is
// reported through notef and acknowledged when it has an envelope_id (a
// second delivery would be as malformed); it never drops the connection.
//
// Reconnecting (after a disconnect envelope, a dropped socket, a missed
// ping) is socketmode's own loop with its backoff. Listen returns nil when
// ctx ends, or the error that made socketmode give up (invalid_auth, a
// revoked token), or one that no retry mends, which socketmode would retry
// for ever (a bot token given as the app token: not_allowed_token_type).
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
				if ce, ok := evt.Data.(*slackgo.ConnectionErrorEvent); ok && refused(ce.ErrorObj) {
					// socketmode retries these for ever; no retry can mend them.
					return apiError("apps.connections.open", ce.ErrorObj)
				}
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
	if api, ok := evt.Data.(slackevents.EventsAPIEvent); ok {
		if e, ok := FromEvent(api); ok {
			handle(ctx, e)
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

// refused reports whether Slack refused the connection for a reason only
// a new token mends.
func refused(err error) bool {
	if err == nil {
		return false
	}
	switch err.Error() {
	case "not_allowed_token_type", "missing_scope", "no_permission":
		return true
	}
	return false
}
