package escalate

import (
	"context"
	"fmt"

	"github.com/teamkit/teamkit/pkg/mailbox"
)

// The local channel: the mailbox itself. Every ask can be answered with
// `ask answer` (AnswerLocal), which records the answer with the same
// compare-and-set a pass uses, so there is nothing to post and nothing to
// read: the pass carries every answered ask back, whichever channel
// answered it.

// LocalChannel is the mailbox as a channel.
type LocalChannel struct{}

// Name is "local".
func (LocalChannel) Name() string { return "local" }

// Holds: an ask that names no issue waits on the local channel (any ask
// may still be answered with ask answer).
func (LocalChannel) Holds(a mailbox.Ask) bool { return a.Issue == "" }

// Describe says "channel=local" for the asks it holds.
func (c LocalChannel) Describe(a mailbox.Ask) Description {
	if !c.Holds(a) {
		return Description{}
	}
	return Description{KV: []string{"channel", "local"}, Column: "local", Fallback: true}
}

// Post has nothing to do: the ask's record is the question.
func (LocalChannel) Post(_ context.Context, _ *mailbox.DB, a mailbox.Ask, _ bool) (mailbox.Ask, error) {
	return a, nil
}

// Ready: the mailbox is the pass's own; its failures end the pass.
func (LocalChannel) Ready(context.Context, Round) error { return nil }

// Find finds nothing to claim: a local answer is recorded as it is given.
func (LocalChannel) Find(context.Context, Round, mailbox.Ask) (mailbox.Decision, bool, error) {
	return mailbox.Decision{}, false, nil
}

// LocalAnswer is an answer given on the local channel (`ask answer`).
type LocalAnswer struct {
	ID int64
	// Text is the answer, or an approval's optional reason.
	Text string
	// Decision is mailbox.DecisionAnswered, DecisionApproved or DecisionRejected.
	Decision string
	// By names the person answering.
	By string
	// Deciders may decide approvals; By must be one of them (fail closed).
	Deciders Deciders
}

// AnswerLocal records a local answer with the same compare-and-set from
// awaiting that resume uses, so it can race a GitHub reply safely: whichever
// is recorded first is the answer. The next resume pass re-spawns the agent.
func AnswerLocal(ctx context.Context, db *mailbox.DB, la LocalAnswer) (mailbox.Ask, error) {
	a, err := db.Ask(ctx, la.ID)
	if err != nil {
		return mailbox.Ask{}, err
	}
	switch {
	case a.Kind == mailbox.KindApproval && la.Decision == mailbox.DecisionAnswered:
		return a, fmt.Errorf("ask %d %w", a.ID, ErrNeedsDecision)
	case a.Kind != mailbox.KindApproval && la.Decision != mailbox.DecisionAnswered:
		return a, fmt.Errorf("ask %d %w", a.ID, ErrNotApproval)
	case a.Kind != mailbox.KindApproval && blankAnswer(la.Text):
		return a, ErrEmptyAnswer
	case a.Kind == mailbox.KindApproval && !la.Deciders.Has(la.By):
		return a, fmt.Errorf("ask %d %w", a.ID, ErrNotDecider)
	}
	if la.Text != "" {
		if err := mailbox.CheckBody(la.Text); err != nil {
			return a, fmt.Errorf("%w: %w", ErrBadAnswer, err)
		}
	}
	if a.State != mailbox.AskAwaiting {
		return a, alreadyAnswered(a)
	}
	won, err := db.DecideAsk(ctx, a.ID, mailbox.Decision{Answer: la.Text, DecidedBy: la.By, Decision: la.Decision, Source: SourceLocal})
	if err != nil {
		return a, err
	}
	if a, err = db.Ask(ctx, la.ID); err != nil {
		return a, err
	}
	if !won {
		return a, alreadyAnswered(a)
	}
	return a, nil
}

func alreadyAnswered(a mailbox.Ask) error {
	return fmt.Errorf("ask %d is %w (%s by %s, %s)", a.ID, ErrAlreadyAnswered, a.Decision, safeLogin(a.DecidedBy), a.Source)
}
