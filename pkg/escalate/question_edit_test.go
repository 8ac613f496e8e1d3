package escalate

import (
	"fmt"

	"context"
	"github.com/teamkit/teamkit/pkg/github"
	"strings"
	"testing"
	"time"

	"github.com/teamkit/teamkit/pkg/mailbox"
)

// The question comment of an approval is what a decider reads before a 👍
// or an /approve. Anyone with write access to the repository may edit any
// comment on it, teamkit's own included (GitHub keeps the comment's id and
// reactions, and changes its body and updated_at: docs.github.com,
// "Managing disruptive comments", "Editing a comment"). An edit can make
// the decider approve something other than what the agent asked, while the
// agent is re-spawned with its own question and "you have approval".
// teamkit never edits its question, so an edited one decides nothing.
func TestApprovalOnEditedQuestionDecidesNothing(t *testing.T) {
	for _, how := range []string{"reaction", "comment"} {
		t.Run(how, func(t *testing.T) {
			f := newFixture(t)
			ctx := context.Background()
			a := f.ask("w1", issue, mailbox.KindApproval, "May I run terraform destroy on prod?")
			// mallory, a collaborator who is no decider, edits the
			// question an hour later.
			body := f.fake.Comments("octo", "repo", 7)[0].Body
			editLater(t, f, a.CommentID, strings.ReplaceAll(body, "terraform destroy on prod", "terraform plan on staging"))
			if how == "reaction" {
				if _, err := f.fake.AddReaction(a.CommentID, "erin", "+1"); err != nil {
					t.Fatal(err)
				}
			} else {
				f.comment("erin", "MEMBER", "/approve a plan is harmless")
			}
			if err := f.resumer(f.db, "erin").Pass(ctx); err != nil {
				t.Logf("pass: %v", err)
			}
			if got := f.state(a.ID); got.State != mailbox.AskAwaiting || f.spawnCount() != 0 {
				t.Fatalf("ask %d is %s (%s by %s), %d spawns: approved on a question comment someone else edited",
					a.ID, got.State, got.Decision, got.DecidedBy, f.spawnCount())
			}
			if !strings.Contains(f.stderr.String(), "question comment was edited") {
				t.Errorf("stderr %q: want a warning that the question was edited", f.stderr.String())
			}
		})
	}
}

// A question's answer, by contrast, is not a decision: an edited question
// comment still carries a reply back (fenced, as always).
func TestQuestionOnEditedQuestionStillAnswered(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	a := f.ask("w1", issue, mailbox.KindQuestion, "Which colour?")
	editLater(t, f, a.CommentID, "edited")
	f.comment("carol", "COLLABORATOR", "Blue.")
	if err := f.resumer(f.db, "").Pass(ctx); err != nil || f.spawnCount() != 1 {
		t.Fatalf("pass: %v, %d spawns", err, f.spawnCount())
	}
}

// An ETag kept (by an earlier teamkit) for a listing that already held the
// edited question: a later 👍 changes only the reactions, the comments
// answer 304, and the edit must still be seen.
func TestApprovalOnEditedQuestionBehindAnETag(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	a := f.ask("w1", issue, mailbox.KindApproval, "May I run terraform destroy on prod?")
	editLater(t, f, a.CommentID, "May I run terraform plan?")
	since, err := f.db.AskQuestionTime(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := github.ParseIssueRef(issue)
	page, err := f.gh.Comments(ctx, ref, since.Add(-time.Minute), "")
	if err != nil {
		t.Fatal(err)
	}
	d, _ := ParseDeciders("erin", nil)
	key := fmt.Sprintf("%s/repos/octo/repo/issues/7/comments?since=%s ask=%d rules=%s", f.gh.BaseURL(), sinceParam(since), a.ID,
		fingerprint(a.Kind, d, f.gh.Identity()))
	if err := f.db.SetETag(ctx, key, page.ETag); err != nil {
		t.Fatal(err)
	}
	if _, err := f.fake.AddReaction(a.CommentID, "erin", "+1"); err != nil {
		t.Fatal(err)
	}
	n := len(f.fake.Requests())
	f.resumer(f.db, "erin").Pass(ctx)
	if f.lastRequestsSince(n)[0].Status != 304 {
		t.Fatalf("the kept ETag was not used: %+v", f.lastRequestsSince(n))
	}
	if got := f.state(a.ID); got.State != mailbox.AskAwaiting || f.spawnCount() != 0 {
		t.Fatalf("ask %d is %s (%s by %s): approved on an edited question behind a 304", a.ID, got.State, got.Decision, got.DecidedBy)
	}
}

// editLater edits comment id to body an hour after the fixture's posts,
// on a stand-in clock that moves a second a write.
func editLater(t *testing.T, f *fixture, id int64, body string) {
	t.Helper()
	later := time.Date(2024, 1, 1, 1, 0, 0, 0, time.UTC)
	f.fake.SetClock(func() time.Time { later = later.Add(time.Second); return later })
	if err := f.fake.EditComment(id, body); err != nil {
		t.Fatal(err)
	}
}
