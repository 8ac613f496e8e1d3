// Package escalate is human escalation as a durable record: an agent's
// question (or request for approval) becomes an ask in the mailbox and a
// comment on its GitHub issue (ask), and the first qualifying answer comes
// back to the agent in a fresh spawn whose task holds the original task, the
// question and the fenced answer (resume).
//
// The ways an ask reaches people are Channels (channel.go), one file each:
// github.go, slack.go, local.go. Config (config.go) reads their settings
// from the environment once and makes their clients on first need; the
// resume pass (resume.go) reads them side by side, and each fails alone
// (health.go).
//
// Everything here is testable in one process: the GitHub and Slack APIs
// are interfaces (*github.Client and *slack.Client implement them),
// re-spawning is a function, and the crash points of a resume pass are a
// hook.
//
// Public: a Go program embedding teamkit may import this package.
package escalate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/text"
)

// MaxQuestion is the longest question accepted, in characters: the comment
// that carries it must stay under GitHub's 65536-character limit.
const MaxQuestion = 60000

// Errors callers map to exit codes.
var (
	ErrEmptyQuestion    = errors.New("the question is empty")
	ErrQuestionTooLong  = fmt.Errorf("the question is longer than %d characters", MaxQuestion)
	ErrAlreadyAnswered  = errors.New("already answered")
	ErrNeedsDecision    = errors.New("is an approval: answer it with --approve or --reject (free text is never consent)")
	ErrNotDecider       = errors.New("can only be decided by a listed decider: add your login to --deciders or TEAMKIT_DECIDERS (no list decides nothing)")
	ErrNotApproval      = errors.New("is a question, not an approval: answer it with text, without --approve or --reject")
	ErrEmptyAnswer      = errors.New("the answer is empty")
	ErrBadAnswer        = errors.New("invalid answer")
	ErrAgentNeverLaunch = errors.New("was never started by spawn in this mailbox, so resume could not start it again")
)

// CheckQuestion applies the rules for a question's text.
func CheckQuestion(q string) error {
	if strings.TrimSpace(q) == "" {
		return ErrEmptyQuestion
	}
	if err := mailbox.CheckBody(q); err != nil {
		return fmt.Errorf("question: %w", err)
	}
	if utf8.RuneCountInString(q) > MaxQuestion {
		return ErrQuestionTooLong
	}
	return nil
}

// Record stores the ask as awaiting (once per agent run: a second call for
// the same run returns the first ask with created=false). The agent must be
// one that spawn recorded, or resume could never start it again.
func Record(ctx context.Context, db *mailbox.DB, a mailbox.Ask) (mailbox.Ask, bool, error) {
	if err := CheckQuestion(a.Question); err != nil {
		return mailbox.Ask{}, false, err
	}
	if _, err := db.Agent(ctx, a.Team, a.Agent); err != nil {
		if errors.Is(err, mailbox.ErrNotFound) {
			return mailbox.Ask{}, false, fmt.Errorf("agent %s/%s %w", a.Team, a.Agent, ErrAgentNeverLaunch)
		}
		return mailbox.Ask{}, false, err
	}
	return db.CreateAsk(ctx, a)
}

// SlackMessage is the text mirrored to Slack for ask a.
func SlackMessage(a mailbox.Ask) string {
	var b strings.Builder
	kind := "asks"
	if a.Kind == mailbox.KindApproval {
		kind = "asks for approval"
	}
	fmt.Fprintf(&b, "teamkit: agent %s of team %s %s (ask %d):\n%s\n", a.Agent, a.Team, kind, a.ID, a.Question)
	switch {
	case a.CommentURL != "":
		fmt.Fprintf(&b, "Answer on GitHub: %s", a.CommentURL)
	case a.Issue != "":
		fmt.Fprintf(&b, "It could not be posted to %s yet; answer locally: ask answer %d", a.Issue, a.ID)
	default:
		fmt.Fprintf(&b, "Answer locally: ask answer %d", a.ID)
	}
	if a.Kind == mailbox.KindApproval {
		b.WriteString(" (a decider, with /approve or /reject)")
	}
	// Slack reads <…> as links and mentions (<!channel>); & < > must be
	// escaped so the agent's text shows as written and pings nobody.
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(b.String())
}

// MirrorSlack posts {"text": …} for ask a to a Slack incoming webhook. The
// webhook URL is a secret: errors name only its host.
func MirrorSlack(ctx context.Context, hc *http.Client, webhook string, a mailbox.Ask) error {
	u, err := url.Parse(webhook)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return errors.New("slack mirror: TEAMKIT_SLACK_WEBHOOK is not an http(s) URL")
	}
	body, err := json.Marshal(map[string]string{"text": SlackMessage(a)})
	if err != nil {
		return fmt.Errorf("slack mirror: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, webhook, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("slack mirror to %s: %w", u.Host, stripURL(err))
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("slack mirror to %s: %w", u.Host, stripURL(err))
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("slack mirror to %s: HTTP %d %s", u.Host, resp.StatusCode, text.OneLine(string(msg)))
	}
	return nil
}

// stripURL drops the URL (which holds the webhook's secret) from a
// transport error.
func stripURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
