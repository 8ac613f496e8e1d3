package escalate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/slack"
	"github.com/teamkit/teamkit/pkg/text"
)

// Slack is the part of the Slack Web API that ask and resume use.
type Slack interface {
	Identity(ctx context.Context) (slack.Identity, error)
	Post(ctx context.Context, channel, text string, m slack.Meta) (slack.Posted, error)
	FindPosted(ctx context.Context, channel, botID string, since time.Time, m slack.Meta) (slack.Posted, bool, error)
}

var _ Slack = (*slack.Client)(nil)

// SlackSourcePrefix starts the Source of an answer that came from Slack:
// "slack:CHANNEL/THREAD_TS" for a reaction on the question,
// "slack:CHANNEL/THREAD_TS/REPLY_TS" for a reply in its thread.
const SlackSourcePrefix = "slack:"

// Reactions that decide an approval. Skin tones ("+1::skin-tone-3") are
// the same reaction.
var (
	approveReactions = map[string]bool{"white_check_mark": true, "+1": true}
	rejectReactions  = map[string]bool{"x": true, "-1": true}
)

func baseReaction(name string) string {
	base, _, _ := strings.Cut(name, "::")
	return base
}

// SlackPeople is who may answer in Slack: Deciders decide approvals (and
// may answer questions), Answerers answer questions.
type SlackPeople struct {
	Deciders, Answerers Deciders
}

// SlackQuestion is the chat.postMessage text for ask a: which agent of which
// team asks, the question quoted, and how to answer in Slack — for an
// approval, who may decide and with which reaction. The agent's text has
// & < > escaped, so it can mention nobody and disguise no link; the only
// mentions are teamkit's own, of the listed people.
func SlackQuestion(a mailbox.Ask, p SlackPeople) string {
	var b strings.Builder
	if a.Kind == mailbox.KindApproval {
		fmt.Fprintf(&b, "*Approval requested by agent `%s` of team `%s`* (teamkit ask %d)\n", a.Agent, a.Team, a.ID)
	} else {
		fmt.Fprintf(&b, "*Question from agent `%s` of team `%s`* (teamkit ask %d)\n", a.Agent, a.Team, a.ID)
	}
	q := slackEscape(strings.ReplaceAll(strings.ReplaceAll(a.Question, "\r\n", "\n"), "\r", "\n"))
	if r := []rune(q); len(r) > maxSlackQuestion {
		// Slack refuses or cuts text past 40,000 characters. Cut before
		// any escape the limit split.
		q = string(r[:maxSlackQuestion])
		if i := strings.LastIndexByte(q, '&'); i >= 0 && !strings.Contains(q[i:], ";") {
			q = q[:i]
		}
		q += "\n[… cut: the whole question is in 'ask list " + a.Team + " --json'" + ifIssue(a) + "]"
	}
	for _, line := range strings.Split(strings.TrimRight(q, "\n"), "\n") {
		b.WriteString("> ")
		b.WriteString(line)
		b.WriteByte('\n')
	}
	mention := func(d Deciders) string {
		ids := d.IDs()
		for i, id := range ids {
			ids[i] = "<@" + id + ">"
		}
		return strings.Join(ids, ", ")
	}
	if a.Kind == mailbox.KindApproval {
		who := "a listed decider (TEAMKIT_SLACK_DECIDERS of the resume watching this team)"
		if p.Deciders.Len() > 0 {
			who = mention(p.Deciders)
		}
		fmt.Fprintf(&b, "*How to decide:* react to this message with :white_check_mark: (or :+1:) to approve, "+
			"or :x: (or :-1:) to reject. Only %s can decide; replies in the thread, and reactions from anyone else, "+
			"are not a decision. The first decision counts.", who)
	} else {
		who := "a listed answerer (TEAMKIT_SLACK_ANSWERERS or TEAMKIT_SLACK_DECIDERS of the resume watching this team)"
		if all := p.Answerers.Union(p.Deciders); all.Len() > 0 {
			who = mention(all)
		}
		fmt.Fprintf(&b, "*How to answer:* reply in this thread. The first reply from %s is carried back to the agent, "+
			"which is started again with your answer. Other replies are ignored.", who)
	}
	if a.CommentURL != "" {
		fmt.Fprintf(&b, "\nAlso on GitHub: %s", slackEscape(a.CommentURL))
	}
	b.WriteString("\n_The agent has stopped and waits for the answer._")
	return b.String()
}

// maxSlackQuestion is the longest question quoted whole in Slack, in
// characters, leaving room for the rest of the message and the escapes.
const maxSlackQuestion = 30000

func ifIssue(a mailbox.Ask) string {
	if a.Issue == "" {
		return ""
	}
	return " and on " + a.Issue
}

func slackEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// slackUnescape undoes the three escapes Slack applies to message text.
func slackUnescape(s string) string {
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(s)
}

func slackMeta(a mailbox.Ask) slack.Meta {
	return slack.Meta{AskID: a.ID, Team: a.Team, Agent: a.Agent, Run: a.Run}
}

// PostSlack mirrors ask a's question into channel, exactly once: unless
// fresh (the ask was just created, so nothing can have been posted), it
// first looks in the channel's history for the bot's own message carrying
// this ask's metadata, since an earlier attempt may have reached Slack even
// though it reported a failure. The message's channel and ts are recorded
// on the ask; a failure is recorded too (for ask list, and so that resume
// posts it later) and returned.
func PostSlack(ctx context.Context, db *mailbox.DB, sl Slack, channel string, p SlackPeople, a mailbox.Ask, fresh bool) (mailbox.Ask, error) {
	if a.SlackTS != "" {
		return a, nil
	}
	posted, found, err := findSlackPost(ctx, sl, channel, a, fresh)
	if err == nil && !found {
		posted, err = sl.Post(ctx, channel, SlackQuestion(a, p), slackMeta(a))
	}
	if err != nil {
		err = fmt.Errorf("post ask %d to Slack: %w", a.ID, err)
		if rerr := db.SetAskSlackError(context.WithoutCancel(ctx), a.ID, text.OneLine(err.Error())); rerr != nil {
			return a, errors.Join(err, rerr)
		}
		return a, err
	}
	if _, err := db.SetAskSlackPosted(context.WithoutCancel(ctx), a.ID, posted.Channel, posted.TS); err != nil {
		return a, err
	}
	return db.Ask(ctx, a.ID)
}

func findSlackPost(ctx context.Context, sl Slack, channel string, a mailbox.Ask, fresh bool) (slack.Posted, bool, error) {
	if fresh {
		return slack.Posted{}, false, nil
	}
	id, err := sl.Identity(ctx)
	if err != nil {
		return slack.Posted{}, false, err
	}
	// Slack's clock and this host's may differ: look from well before.
	return sl.FindPosted(ctx, channel, id.BotID, a.CreatedAt.Add(-time.Hour), slackMeta(a))
}

// SlackHandler stores each Slack event on an awaiting ask's message or
// thread that could answer it — a reply in a question's thread, a ✅/❌ on
// an approval — so the resume pass can judge it, and calls wake when it
// stored one for team. It returns nil (acknowledge) once the event is
// stored or known to matter to no ask, and an error (do not acknowledge:
// Slack delivers it again) when the mailbox failed.
//
// Who wrote it is not judged here: the pass does that with the lists it
// reads every pass, under the kill-switch, so an event that arrives while
// the team is paused is kept, not lost, and decides nothing until unpaused.
func SlackHandler(db *mailbox.DB, team string, wake func()) slack.Handler {
	return func(ctx context.Context, e slack.Event) error {
		a, err := db.AskBySlackMessage(ctx, e.Channel, e.On)
		if errors.Is(err, mailbox.ErrNotFound) {
			return nil // not a question teamkit posted
		}
		if err != nil {
			return err
		}
		if a.State != mailbox.AskAwaiting {
			return nil // answered already: nothing can count now
		}
		switch {
		case a.Kind == mailbox.KindApproval && e.Kind == slack.KindReaction:
			r := baseReaction(e.Reaction)
			if !approveReactions[r] && !rejectReactions[r] {
				return nil
			}
		case a.Kind == mailbox.KindQuestion && e.Kind == slack.KindReply:
		default:
			return nil // text on an approval, a reaction on a question: never an answer
		}
		stored, err := db.AddSlackEvent(ctx, mailbox.SlackEvent{
			AskID: a.ID, Key: e.Key, Kind: e.Kind, User: e.User, Reaction: e.Reaction, Text: e.Text,
			Channel: e.Channel, ThreadTS: e.On, TS: e.TS,
		})
		if err != nil {
			return err
		}
		if stored && a.Team == team && wake != nil {
			wake()
		}
		return nil
	}
}

// FindSlackAnswer returns the first (by Slack's ts) qualifying answer among
// the Slack events stored for ask a, as the decision to record.
//
// A question is answered by the text of the first thread reply from a
// listed answerer or Slack decider. An approval is decided only by a
// ✅ (white_check_mark, +1) or ❌ (x, -1) reaction on the question from a
// listed Slack decider. Unlisted people and (on an
// approval) every reply decide nothing; no list decides nothing.
func FindSlackAnswer(a mailbox.Ask, events []mailbox.SlackEvent, p SlackPeople) (mailbox.Decision, bool) {
	for _, e := range events {
		if e.User == "" {
			continue
		}
		if a.Kind == mailbox.KindApproval {
			if e.Kind != mailbox.SlackReaction || !p.Deciders.Has(e.User) {
				continue
			}
			r := baseReaction(e.Reaction)
			decision := ""
			switch {
			case approveReactions[r]:
				decision = mailbox.DecisionApproved
			case rejectReactions[r]:
				decision = mailbox.DecisionRejected
			default:
				continue
			}
			return mailbox.Decision{DecidedBy: e.User, Decision: decision, Source: SlackSourcePrefix + e.Channel + "/" + e.ThreadTS}, true
		}
		if e.Kind != mailbox.SlackReply || strings.TrimSpace(e.Text) == "" {
			continue
		}
		if !p.Answerers.Has(e.User) && !p.Deciders.Has(e.User) {
			continue
		}
		return mailbox.Decision{Answer: slackUnescape(e.Text), DecidedBy: e.User, Decision: mailbox.DecisionAnswered,
			Source: SlackSourcePrefix + e.Channel + "/" + e.ThreadTS + "/" + e.TS}, true
	}
	return mailbox.Decision{}, false
}

// fromSlack handles the Slack side of awaiting ask a in a pass: it posts a
// question that ask failed to post, or judges the Slack events stored for
// it and claims the first qualifying answer. claimed reports that the ask
// was decided here (so the pass does not read GitHub for it). Only database
// errors are returned.
func (p *pass) fromSlack(a mailbox.Ask) (claimed bool, err error) {
	db, ctx := p.r.DB, p.ctx
	if a.SlackTS == "" {
		if a.SlackError != "" && p.r.Slack != nil {
			p.postSlack(a)
		}
		return false, nil
	}
	events, err := db.SlackEvents(ctx, a.ID)
	if err != nil || len(events) == 0 || p.slackPeopleErr != nil {
		return false, err
	}
	people := p.slackPeople
	if a.Kind == mailbox.KindApproval && !people.Deciders.Configured {
		p.r.note("warning: ask %d (%s/%s) has Slack reactions, but no Slack deciders are configured "+
			"(TEAMKIT_SLACK_DECIDERS or --slack-deciders); nothing in Slack can decide it, so it stays awaiting", a.ID, a.Team, a.Agent)
		return false, nil
	}
	if a.Kind != mailbox.KindApproval && !people.Deciders.Configured && !people.Answerers.Configured {
		p.r.note("warning: ask %d (%s/%s) has Slack replies, but no Slack answerers are configured "+
			"(TEAMKIT_SLACK_ANSWERERS or TEAMKIT_SLACK_DECIDERS); no Slack reply can answer it", a.ID, a.Team, a.Agent)
		return false, nil
	}
	dec, ok := FindSlackAnswer(a, events, people)
	if !ok {
		return false, nil
	}
	return true, p.claim(a, dec)
}

// postSlack posts the question of ask a, which ask could not post, once.
func (p *pass) postSlack(a mailbox.Ask) {
	if p.slack == nil && p.slackErr == nil {
		p.slack, p.slackErr = p.r.Slack()
	}
	if p.slackErr != nil {
		if !p.slackReported {
			p.slackReported = true
			p.count()
			p.r.note("error: slack: %s; questions not yet in Slack stay unposted", text.OneLine(p.slackErr.Error()))
		}
		return
	}
	people := p.slackPeople
	posted, err := PostSlack(p.ctx, p.r.DB, p.slack, p.r.SlackChannel, people, a, false)
	if err != nil {
		p.count()
		p.r.note("error: ask %d (%s/%s): %s; the next pass tries again", a.ID, a.Team, a.Agent, text.OneLine(err.Error()))
		return
	}
	p.r.note("posted ask %d to Slack channel %s (ts %s)", posted.ID, posted.SlackChannel, posted.SlackTS)
}

// The environment variables of the Slack channel.
const (
	EnvSlackBotToken  = "TEAMKIT_SLACK_BOT_TOKEN"
	EnvSlackAppToken  = "TEAMKIT_SLACK_APP_TOKEN"
	EnvSlackChannel   = "TEAMKIT_SLACK_CHANNEL"
	EnvSlackAPIURL    = "TEAMKIT_SLACK_API_URL"
	EnvSlackDeciders  = "TEAMKIT_SLACK_DECIDERS"
	EnvSlackAnswerers = "TEAMKIT_SLACK_ANSWERERS"
)

// ReadSlackPeople parses the Slack deciders and answerers lists (see
// ParseSlackUsers). Either failing is an error: the caller then lets
// nothing in Slack count (fail closed).
func ReadSlackPeople(deciders, answerers string, readFile func(string) ([]byte, error)) (SlackPeople, error) {
	d, err := ParseSlackUsers("Slack deciders", deciders, readFile)
	if err != nil {
		return SlackPeople{}, err
	}
	a, err := ParseSlackUsers("Slack answerers", answerers, readFile)
	if err != nil {
		return SlackPeople{}, err
	}
	return SlackPeople{Deciders: d, Answerers: a}, nil
}
