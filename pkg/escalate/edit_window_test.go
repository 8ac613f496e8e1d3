package escalate

import (
	"context"
	"testing"

	"github.com/teamkit/teamkit/pkg/mailbox"
)

// GitHub stamps a new comment's created_at and updated_at alike, to the
// second, and bumps updated_at on an edit only (not on a reaction). An
// edit made within a second or two of the post shows updated_at one
// second after created_at: the stand-in's clock, one second a write, gives
// exactly that to an edit right after the post. A webhook tells a
// collaborator's script of a new comment at once, so such an edit is no
// accident of timing, and it must count as an edit like any other.
func TestEditWithinASecondIsAnEdit(t *testing.T) {
	t.Run("decider's reply", func(t *testing.T) {
		f := newFixture(t)
		a := f.ask("w1", issue, mailbox.KindApproval, "May I deploy?")
		id := f.comment("erin", "MEMBER", "Looking at it after lunch.")
		if err := f.fake.EditComment(id, "/approve"); err != nil { // mallory, with write access
			t.Fatal(err)
		}
		f.resumer(f.db, "erin").Pass(context.Background())
		if got := f.state(a.ID); got.State != mailbox.AskAwaiting {
			t.Fatalf("ask %d is %s (%s by %s): a reply edited a second after its post decided it", a.ID, got.State, got.Decision, got.DecidedBy)
		}
	})
	t.Run("question comment", func(t *testing.T) {
		f := newFixture(t)
		a := f.ask("w1", issue, mailbox.KindApproval, "May I run terraform destroy on prod?")
		if err := f.fake.EditComment(a.CommentID, "May I run terraform plan?"); err != nil {
			t.Fatal(err)
		}
		if _, err := f.fake.AddReaction(a.CommentID, "erin", "+1"); err != nil {
			t.Fatal(err)
		}
		f.resumer(f.db, "erin").Pass(context.Background())
		if got := f.state(a.ID); got.State != mailbox.AskAwaiting {
			t.Fatalf("ask %d is %s (%s by %s): approved on a question edited a second after its post", a.ID, got.State, got.Decision, got.DecidedBy)
		}
	})
}
