package escalate

import (
	"context"
	"errors"
	"fmt"
	"strconv"
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
	Reactions(ctx context.Context, channel, ts string) ([]slack.Reaction, error)
	Replies(ctx context.Context, channel, ts string, stop func(slack.Reply) bool) ([]slack.Reply, error)
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
			"are not a decision. The reactions are read as they stand when teamkit records the decision "+
			"(a removed one does not count), and a :x: from any of them outweighs a :white_check_mark:.", who)
	} else {
		who := "a listed answerer (TEAMKIT_SLACK_ANSWERERS or TEAMKIT_SLACK_DECIDERS of the resume watching this team)"
		if all := p.Answerers.Union(p.Deciders); all.Len() > 0 {
			who = mention(all)
		}
		fmt.Fprintf(&b, "*How to answer:* reply in this thread. The first reply from %s is carried back to the agent, "+
			"which is started again with your answer, as the reply stands when teamkit records it (edited: the new text; "+
			"deleted: not an answer). Other replies are ignored.", who)
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

// SlackPosting is the slack_error of an ask whose question ask is posting
// to Slack: set before the post, cleared by its record. One left behind
// is an ask killed mid-post.
const SlackPosting = "posting (not recorded yet)"

// doorbellLookup bounds the doorbell's look-up of an event's ask: Slack
// wants the envelope acknowledged within 3 seconds.
const doorbellLookup = 2 * time.Second

// SlackDoorbell is the Socket-Mode handler of a watching resume: it calls
// ring when an event concerns an awaiting ask of team (or when the mailbox
// cannot say whether it does: ringing costs one pass, missing costs an
// answer's wait). The event itself is never stored or judged: the pass
// reads the thread as it stands (readSlack), so an event lost, forged,
// redelivered or arriving during an outage changes no answer.
func SlackDoorbell(db *mailbox.DB, team string, ring func()) slack.Handler {
	return func(ctx context.Context, e slack.Event) {
		ctx, cancel := context.WithTimeout(ctx, doorbellLookup)
		defer cancel()
		a, err := db.AskBySlackMessage(ctx, e.Channel, e.On)
		switch {
		case errors.Is(err, mailbox.ErrNotFound):
		case err != nil:
			ring()
		case a.Team == team && a.State == mailbox.AskAwaiting:
			ring()
		}
	}
}

// SlackThread is the Slack side of an ask as it stands: the reactions on
// the question (read for an approval) and the replies in its thread (read
// for a question).
type SlackThread struct {
	Channel, TS string
	Reactions   []slack.Reaction
	Replies     []slack.Reply
}

// FindSlackAnswer returns the decision the Slack thread of ask a holds as
// it stands.
//
// A question is answered by the current text of the first (oldest) thread
// reply from a listed answerer or Slack decider that a person posted
// (not a bot) and that is not blank; a deleted reply is not in the thread.
// An approval is decided only by ✅ (white_check_mark, +1) and ❌ (x, -1)
// reactions on the question from listed Slack deciders that still stand:
// a ❌ from any of them rejects, else a ✅ approves. (Slack does not say
// when a reaction was added, so "the first" cannot be told; the
// conservative reading is that a standing objection is no consent.)
// Unlisted people and (on an approval) every reply decide nothing; no
// list decides nothing.
func FindSlackAnswer(a mailbox.Ask, th SlackThread, p SlackPeople) (mailbox.Decision, bool) {
	if a.Kind == mailbox.KindApproval {
		var approver, rejecter string
		for _, r := range th.Reactions {
			base := baseReaction(r.Name)
			for _, u := range r.Users {
				if !p.Deciders.Has(u) {
					continue
				}
				if approveReactions[base] && approver == "" {
					approver = u
				}
				if rejectReactions[base] && rejecter == "" {
					rejecter = u
				}
			}
		}
		source := SlackSourcePrefix + th.Channel + "/" + th.TS
		switch {
		case rejecter != "":
			return mailbox.Decision{DecidedBy: rejecter, Decision: mailbox.DecisionRejected, Source: source}, true
		case approver != "":
			return mailbox.Decision{DecidedBy: approver, Decision: mailbox.DecisionApproved, Source: source}, true
		}
		return mailbox.Decision{}, false
	}
	for _, r := range th.Replies {
		if !answers(r, p) {
			continue
		}
		return mailbox.Decision{Answer: slackUnescape(r.Text), DecidedBy: r.User, Decision: mailbox.DecisionAnswered,
			Source: SlackSourcePrefix + th.Channel + "/" + th.TS + "/" + r.TS}, true
	}
	return mailbox.Decision{}, false
}

// answers reports whether reply r answers a question under p.
func answers(r slack.Reply, p SlackPeople) bool {
	if r.User == "" || r.BotID != "" || (r.SubType != "" && r.SubType != "thread_broadcast") || blankAnswer(slackUnescape(r.Text)) {
		return false
	}
	return p.Answerers.Has(r.User) || p.Deciders.Has(r.User)
}

// readSlack reads the Slack side of ask a as it stands: one reactions.get
// for an approval, or conversations.replies (up to the first reply that
// answers) for a question.
func readSlack(ctx context.Context, sl Slack, a mailbox.Ask, p SlackPeople) (SlackThread, error) {
	th := SlackThread{Channel: a.SlackChannel, TS: a.SlackTS}
	var err error
	if a.Kind == mailbox.KindApproval {
		th.Reactions, err = sl.Reactions(ctx, a.SlackChannel, a.SlackTS)
	} else {
		th.Replies, err = sl.Replies(ctx, a.SlackChannel, a.SlackTS, func(r slack.Reply) bool { return answers(r, p) })
	}
	return th, err
}

// SlackChannel carries asks mirrored into a Slack channel: the question
// is a bot message, the answer a listed person's thread reply or, for an
// approval, a Slack decider's ✅/❌ reaction, read as it stands.
type SlackChannel struct {
	// Client makes the Web API client (bot token) on first need; nil when
	// no bot token is set.
	Client func() (Slack, error)
	// Channel is the channel ID questions are posted to ("" for none).
	Channel string
	// People resolves who may answer in Slack; re-read every pass (like
	// the deciders). Nil means nobody.
	People func() (SlackPeople, error)

	// Per pass (reset by Ready).
	people SlackPeople
	// peopleErr: a list could not be read; nothing from Slack counts.
	peopleErr error
	// limited: Slack said 429 this pass, and the pass said so.
	limited bool
	// from: this pass reads no ask before it (SlackReadFromSetting);
	// fromRead: it was read (and cleared) this pass.
	from     int64
	fromRead bool
}

// SlackReadFromSetting is the team setting that holds the ask a pass's
// Slack reads stopped at for a rate limit: the next pass starts there, so
// under a lasting limit (more asks awaiting than a pass's budget) the later
// asks are read every other pass rather than never. A pass reads it once
// and clears it; a limit sets it again.
const SlackReadFromSetting = "slack.read_from"

// Name is "slack".
func (c *SlackChannel) Name() string { return "slack" }

// Holds: an ask posted to Slack, or one whose post failed while a channel
// to post it to is configured.
func (c *SlackChannel) Holds(a mailbox.Ask) bool {
	return a.SlackTS != "" || a.SlackError != "" && c.Client != nil && c.Channel != ""
}

// Describe is the question's message in Slack (or that posting it failed).
func (c *SlackChannel) Describe(a mailbox.Ask) Description {
	switch {
	case a.SlackTS != "":
		return Description{KV: []string{"slack", a.SlackChannel, "slack_ts", a.SlackTS}, Column: "slack " + a.SlackChannel,
			Where: "Slack channel " + a.SlackChannel}
	case a.SlackError == SlackPosting:
		return Description{KV: []string{"slack", "posting"}, Note: "(slack post not recorded yet: being posted, or its ask was killed posting it)"}
	case a.SlackError != "":
		return Description{KV: []string{"slack", "failed"}, Note: "(slack post failed: " + text.FirstLine(a.SlackError, 60) + ")"}
	}
	return Description{}
}

// Post mirrors ask a's question into the channel, when one is configured.
// Slack is a mirror: every failure is an *OptionalError, recorded on the
// ask when it got as far as trying, so a pass posts it later.
func (c *SlackChannel) Post(ctx context.Context, db *mailbox.DB, a mailbox.Ask, fresh bool) (mailbox.Ask, error) {
	if c.Client == nil && c.Channel == "" || a.SlackTS != "" {
		return a, nil
	}
	if c.Client == nil || c.Channel == "" {
		return a, &OptionalError{fmt.Errorf("slack: set both %s and %s to post questions to Slack; not posting", EnvSlackBotToken, EnvSlackChannel)}
	}
	if err := slack.CheckChannel(c.Channel); err != nil {
		return a, &OptionalError{fmt.Errorf("slack: %w; not posting", err)}
	}
	// The lists only shape the message (who to mention); resume judges.
	var people SlackPeople
	if c.People != nil {
		people, _ = c.People()
	}
	sl, err := c.Client()
	if err == nil && a.SlackError == "" {
		// Say that a post is under way before it is made: an ask killed
		// mid-post is then still the Slack channel's, and a pass finds
		// its message (or, after PostGrace, posts it).
		err = db.SetAskSlackError(ctx, a.ID, SlackPosting)
	}
	if err == nil {
		var posted mailbox.Ask
		if posted, err = PostSlack(ctx, db, sl, c.Channel, people, a, fresh); err == nil {
			return posted, nil
		}
	} else if rerr := db.SetAskSlackError(ctx, a.ID, text.OneLine(err.Error())); rerr != nil {
		err = errors.Join(err, rerr)
	}
	if again, rerr := db.Ask(ctx, a.ID); rerr == nil {
		a = again
	}
	return a, &OptionalError{fmt.Errorf("%w; resume posts it to Slack later, once", err)}
}

// ReadPeople re-reads who may answer (PeopleReader).
func (c *SlackChannel) ReadPeople() error {
	c.people, c.peopleErr = SlackPeople{}, nil
	if c.People == nil {
		return nil
	}
	if c.people, c.peopleErr = c.People(); c.peopleErr != nil {
		c.people = SlackPeople{}
		return &peopleError{msg: fmt.Sprintf("slack: %s; nothing said in Slack counts until it is fixed", text.OneLine(c.peopleErr.Error())), err: c.peopleErr}
	}
	return nil
}

// Ready makes the client.
func (c *SlackChannel) Ready(ctx context.Context, rd Round) error {
	c.limited, c.from, c.fromRead = false, 0, false
	if c.Client == nil {
		return &ConfigError{Err: fmt.Errorf("slack: %s is not set, and asks await answers in Slack", EnvSlackBotToken),
			Hint: "set " + EnvSlackBotToken + " to the bot token (xoxb-…) of the app that posted them"}
	}
	_, err := c.Client()
	return slackConfigError(err)
}

// Find posts a question that ask failed to post, or reads the question's
// reactions or thread as they stand and returns the answer they hold.
func (c *SlackChannel) Find(ctx context.Context, rd Round, a mailbox.Ask) (mailbox.Decision, bool, error) {
	sl, err := c.Client()
	if err != nil {
		return mailbox.Decision{}, false, slackConfigError(err)
	}
	if a.SlackTS == "" {
		if err := slack.CheckChannel(c.Channel); err != nil {
			return mailbox.Decision{}, false, err
		}
		if a.SlackError != SlackPosting || time.Since(a.CreatedAt) >= PostGrace {
			posted, err := PostSlack(ctx, rd.DB, sl, c.Channel, c.people, a, false)
			if err != nil {
				rd.Fail("error: ask %d (%s/%s): %s; the next pass tries again", a.ID, a.Team, a.Agent, text.OneLine(err.Error()))
				return mailbox.Decision{}, false, nil
			}
			rd.Note("posted ask %d to Slack channel %s (ts %s)", posted.ID, posted.SlackChannel, posted.SlackTS)
			return mailbox.Decision{}, false, nil
		}
		// ask is posting it, or died doing so: only look for its message.
		p, found, err := findSlackPost(ctx, sl, c.Channel, a, false)
		if err != nil {
			rd.Fail("error: ask %d (%s/%s): %s; the next pass tries again", a.ID, a.Team, a.Agent, text.OneLine(err.Error()))
			return mailbox.Decision{}, false, nil
		}
		if !found {
			return mailbox.Decision{}, false, nil
		}
		if _, err := rd.DB.SetAskSlackPosted(ctx, a.ID, p.Channel, p.TS); err != nil {
			return mailbox.Decision{}, false, err
		}
		if a, err = rd.DB.Ask(ctx, a.ID); err != nil {
			return mailbox.Decision{}, false, err
		}
	}
	if c.peopleErr != nil {
		return mailbox.Decision{}, false, nil // reported once; nothing in Slack counts
	}
	if c.limited {
		return mailbox.Decision{}, false, nil
	}
	if !c.fromRead {
		c.fromRead = true
		v, ok, err := rd.DB.Setting(ctx, a.Team, SlackReadFromSetting)
		if err == nil && ok {
			c.from, _ = strconv.ParseInt(v, 10, 64)
			err = rd.DB.SetSetting(ctx, a.Team, SlackReadFromSetting, "")
		}
		if err != nil {
			return mailbox.Decision{}, false, err
		}
	}
	if a.ID < c.from {
		return mailbox.Decision{}, false, nil // read last pass; the next pass starts over
	}
	people := c.people
	th, err := readSlack(ctx, sl, a, people)
	var rl *slack.RateLimitedError
	switch {
	case errors.As(err, &rl):
		// Not a failure: the next pass reads it, once Slack allows, and
		// starts with it.
		c.limited = true
		if err := rd.DB.SetSetting(ctx, a.Team, SlackReadFromSetting, strconv.FormatInt(a.ID, 10)); err != nil {
			return mailbox.Decision{}, false, err
		}
		rd.Note("warning: %s; ask %d (%s/%s) and the Slack asks after it are read by a later pass", text.OneLine(err.Error()), a.ID, a.Team, a.Agent)
		return mailbox.Decision{}, false, nil
	case err != nil:
		return mailbox.Decision{}, false, slackConfigError(err)
	}
	if a.Kind == mailbox.KindApproval && !people.Deciders.Configured {
		if _, ok := FindSlackAnswer(a, th, SlackPeople{Deciders: everyone(th)}); ok {
			rd.Note("warning: ask %d (%s/%s) has Slack reactions, but no Slack deciders are configured "+
				"(TEAMKIT_SLACK_DECIDERS or --slack-deciders); nothing in Slack can decide it, so it stays awaiting", a.ID, a.Team, a.Agent)
		}
		return mailbox.Decision{}, false, nil
	}
	if a.Kind != mailbox.KindApproval && !people.Deciders.Configured && !people.Answerers.Configured {
		if _, ok := FindSlackAnswer(a, th, SlackPeople{Answerers: everyone(th)}); ok {
			rd.Note("warning: ask %d (%s/%s) has Slack replies, but no Slack answerers are configured "+
				"(TEAMKIT_SLACK_ANSWERERS or TEAMKIT_SLACK_DECIDERS); no Slack reply can answer it", a.ID, a.Team, a.Agent)
		}
		return mailbox.Decision{}, false, nil
	}
	dec, ok := FindSlackAnswer(a, th, people)
	return dec, ok, nil
}

// slackConfigErrors are Slack's answers that mean the token, not Slack,
// is wrong: retrying changes nothing until the configuration does.
var slackConfigErrors = []string{"not_allowed_token_type", "missing_scope", "invalid_auth", "not_authed",
	"account_inactive", "token_revoked", "token_expired", "no_permission", "channel_not_found", "not_in_channel"}

// slackConfigError makes a *ConfigError of err when Slack refused the
// configuration rather than failed.
func slackConfigError(err error) error {
	if err == nil {
		return nil
	}
	for _, code := range slackConfigErrors {
		if strings.Contains(err.Error(), code) {
			return &ConfigError{Err: err, Hint: SlackTokenHint(code)}
		}
	}
	return err
}

// SlackTokenHint says what to check for Slack's error code.
func SlackTokenHint(code string) string {
	switch code {
	case "not_allowed_token_type":
		return "a token of the wrong kind: " + EnvSlackBotToken + " takes the bot token (xoxb-…), " +
			EnvSlackAppToken + " the app-level token (xapp-…, with connections:write)"
	case "missing_scope", "no_permission":
		return "the bot token lacks a scope: give the app chat:write, channels:history, groups:history and reactions:read, and reinstall it"
	case "channel_not_found", "not_in_channel":
		return "check " + EnvSlackChannel + " (the channel's ID) and invite the app into that channel"
	}
	return "check " + EnvSlackBotToken + ": a bot token (xoxb-…) of an app installed in the workspace"
}

// everyone is a list of everybody in th, for telling whether anything
// would have counted had a list been configured.
func everyone(th SlackThread) Deciders {
	d := Deciders{logins: map[string]bool{}, Configured: true}
	for _, r := range th.Reactions {
		for _, u := range r.Users {
			d.logins[strings.ToLower(u)] = true
		}
	}
	for _, r := range th.Replies {
		d.logins[strings.ToLower(r.User)] = true
	}
	return d
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
