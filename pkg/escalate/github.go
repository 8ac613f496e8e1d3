package escalate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/teamkit/teamkit/pkg/github"
	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/text"
)

// The GitHub channel: the question is a comment on the ask's issue, with a
// hidden marker; the answer is the first qualifying reply (or, for an
// approval, a decider's reaction), read conditionally (ETags), so an
// unchanged issue costs no rate limit.

// GitHub is the part of the GitHub API that ask and resume use.
type GitHub interface {
	BaseURL() string
	Identity() string
	Viewer(ctx context.Context) (string, error)
	Issue(ctx context.Context, ref github.IssueRef) (github.Issue, error)
	CreateComment(ctx context.Context, ref github.IssueRef, body string) (github.Comment, error)
	Comments(ctx context.Context, ref github.IssueRef, since time.Time, etag string) (github.Page, error)
	Reactions(ctx context.Context, ref github.IssueRef, commentID int64, etag string) (github.ReactionPage, error)
}

var _ GitHub = (*github.Client)(nil)

// GitHubChannel carries the asks that name an issue.
type GitHubChannel struct {
	// Client makes the client on first need (Clients.GitHub); an error
	// wrapping github.ErrNoToken is a configuration error.
	Client func() (GitHub, error)
	// Deciders resolves who may approve; re-read every pass, so a list in
	// a file is re-read. Nil means no list.
	Deciders func() (Deciders, error)

	gh     GitHub
	viewer string
	// Per pass (reset by Ready).
	deciders Deciders
	// decidersErr: the list could not be read; approvals fail closed.
	decidersErr error
	authors     map[string]string
	// down: GitHub was unreachable or rate limited past its retries for
	// an ask of this pass; the rest of the pass's asks are not tried.
	down error
}

// Name is "github".
func (c *GitHubChannel) Name() string { return "github" }

// Holds: every ask that names an issue is on GitHub.
func (c *GitHubChannel) Holds(a mailbox.Ask) bool { return a.Issue != "" }

// Describe is the issue and the question's comment (or why it is not
// there).
func (c *GitHubChannel) Describe(a mailbox.Ask) Description {
	if !c.Holds(a) {
		return Description{}
	}
	comment, col := a.CommentURL, a.Issue
	switch {
	case a.CommentID == 0 && a.PostError != "":
		col += " (post failed: " + text.FirstLine(a.PostError, 60) + ")"
	case a.CommentID == 0:
		col += " (not posted)"
	}
	if comment == "" {
		comment = "-"
	}
	d := Description{KV: []string{"channel", "github", "issue", a.Issue, "comment", comment}, Column: col}
	if a.CommentID != 0 {
		d.Where = a.Issue
	}
	return d
}

// noTokenHint is what to do about github.ErrNoToken.
const noTokenHint = "log in with 'gh auth login', or set GH_TOKEN"

func (c *GitHubChannel) client() (GitHub, error) {
	if c.gh != nil {
		return c.gh, nil
	}
	gh, err := c.Client()
	if errors.Is(err, github.ErrNoToken) {
		err = &ConfigError{Err: err, Hint: noTokenHint}
	}
	if err != nil {
		return nil, err
	}
	c.gh = gh
	return gh, nil
}

// Post comments ask a's question on its issue, once.
func (c *GitHubChannel) Post(ctx context.Context, db *mailbox.DB, a mailbox.Ask, fresh bool) (mailbox.Ask, error) {
	if a.Issue == "" || a.CommentID != 0 {
		return a, nil
	}
	gh, err := c.client()
	if err != nil {
		err = postFailed(ctx, db, a, err)
		if again, rerr := db.Ask(ctx, a.ID); rerr == nil {
			a = again
		} else {
			err = errors.Join(err, rerr)
		}
		return a, err
	}
	return Post(ctx, db, gh, a, fresh)
}

// ReadPeople re-reads the deciders (PeopleReader).
func (c *GitHubChannel) ReadPeople() error {
	c.deciders, c.decidersErr = Deciders{}, nil
	if c.Deciders == nil {
		return nil
	}
	if c.deciders, c.decidersErr = c.Deciders(); c.decidersErr != nil {
		c.deciders = Deciders{}
		return &peopleError{msg: fmt.Sprintf("deciders: %s; no approval can be decided until it is fixed", text.OneLine(c.decidersErr.Error())), err: c.decidersErr}
	}
	return nil
}

// Ready makes the client.
func (c *GitHubChannel) Ready(ctx context.Context, rd Round) error {
	c.authors, c.down = map[string]string{}, nil
	_, err := c.client()
	return err
}

// Find posts a question that never reached its issue, or reads the replies
// (and an approval's reactions) after it and judges them. Once GitHub has
// been unreachable or rate limited past the client's retries in a pass, the
// pass's other asks fail at once with a note of it, not after retries of
// their own each (a dozen asks took a minute with the network down); they
// stay awaiting for the next pass.
func (c *GitHubChannel) Find(ctx context.Context, rd Round, a mailbox.Ask) (mailbox.Decision, bool, error) {
	dec, found, err := c.find(ctx, rd, a)
	if !isDB(err) && (errors.Is(err, github.ErrUnavailable) || errors.Is(err, github.ErrRateLimited)) {
		cause := err
		var ne *github.NetworkError
		var ae *github.APIError
		if errors.As(err, &ne) {
			cause = ne
		} else if errors.As(err, &ae) {
			cause = ae
		}
		c.down = fmt.Errorf("not tried: an earlier ask of this pass found GitHub out of reach (%w)", cause)
	}
	return dec, found, err
}

func (c *GitHubChannel) find(ctx context.Context, rd Round, a mailbox.Ask) (mailbox.Decision, bool, error) {
	gh, err := c.client()
	if err != nil {
		return mailbox.Decision{}, false, err
	}
	if a.CommentID == 0 {
		// An ask that reported no failure may still be posting it (its
		// POST waits out a rate limit): leave it to ask for a while, or
		// both would post it.
		if a.PostError == "" && a.BudgetRun == "" && time.Since(a.CreatedAt) < PostGrace {
			return mailbox.Decision{}, false, nil
		}
		// The question never reached the issue (ask failed to post it):
		// post it now, once, and read replies from the next pass on.
		if c.down != nil {
			return mailbox.Decision{}, false, c.down
		}
		posted, err := Post(ctx, rd.DB, gh, a, false)
		if err != nil {
			return mailbox.Decision{}, false, err
		}
		rd.Note("posted ask %d to %s: %s", posted.ID, posted.Issue, posted.CommentURL)
		return mailbox.Decision{}, false, nil
	}
	if a.Kind == mailbox.KindApproval && !c.deciders.Configured {
		if c.decidersErr == nil {
			rd.Note("warning: ask %d (%s/%s, %s) asks for approval, but no deciders are configured "+
				"(--deciders or TEAMKIT_DECIDERS); nothing can decide it, so it stays awaiting", a.ID, a.Team, a.Agent, a.Issue)
		}
		return mailbox.Decision{}, false, nil
	}
	ref, err := github.ParseIssueRef(a.Issue)
	if err != nil {
		return mailbox.Decision{}, false, err
	}
	if c.down != nil {
		return mailbox.Decision{}, false, c.down
	}
	dec, found, err := c.read(ctx, rd.DB, gh, ref, a)
	if errors.Is(err, ErrQuestionEdited) {
		rd.Note("warning: ask %d (%s/%s, %s): %v; it stays awaiting: ask again, or decide it with 'ask answer %d'",
			a.ID, a.Team, a.Agent, a.Issue, err, a.ID)
		return mailbox.Decision{}, false, nil
	}
	if errors.Is(err, github.ErrUnauthorized) && !isDB(err) {
		err = &ConfigError{Err: err, Hint: "GitHub refused the token: check GH_TOKEN, GITHUB_TOKEN or the gh login (" + noTokenHint + ")"}
	}
	return dec, found, err
}

// Post puts ask a's question on its issue, exactly once: unless fresh is
// true (the ask was just created, so it cannot have been posted), it first
// looks for a comment by the token's own login carrying this ask's marker,
// since an earlier attempt may have reached GitHub even though it reported
// a failure. A failure is recorded on the ask (ask list shows it) and
// returned; the ask stays awaiting either way.
func Post(ctx context.Context, db *mailbox.DB, gh GitHub, a mailbox.Ask, fresh bool) (mailbox.Ask, error) {
	if a.CommentID != 0 {
		return a, nil
	}
	ref, err := github.ParseIssueRef(a.Issue)
	if err != nil {
		return a, err
	}
	c, found, err := findPosted(ctx, gh, ref, a, fresh)
	if err == nil && !found {
		c, err = gh.CreateComment(ctx, ref, QuestionComment(a))
	}
	if err != nil {
		return a, postFailed(ctx, db, a, err)
	}
	if err := db.SetAskPosted(ctx, a.ID, c.ID, c.HTMLURL); err != nil {
		return a, err
	}
	now, err := db.Ask(ctx, a.ID)
	if err != nil || now.CommentID != c.ID {
		return now, err // another poster's comment was recorded first
	}
	if err := db.SetAskQuestionTime(ctx, a, c.CreatedAt); err != nil {
		return a, err
	}
	return db.Ask(ctx, a.ID)
}

// postFailed records err as the reason ask a is not on its issue.
func postFailed(ctx context.Context, db *mailbox.DB, a mailbox.Ask, err error) error {
	err = fmt.Errorf("post ask %d to %s: %w", a.ID, a.Issue, err)
	if rerr := db.SetAskPostError(context.WithoutCancel(ctx), a.ID, text.OneLine(err.Error())); rerr != nil {
		return errors.Join(err, rerr)
	}
	return err
}

func findPosted(ctx context.Context, gh GitHub, ref github.IssueRef, a mailbox.Ask, fresh bool) (github.Comment, bool, error) {
	if fresh {
		return github.Comment{}, false, nil
	}
	// Our own comments are the token's login's. A GitHub App or Actions
	// token may not read /user (403): its comments are then a bot's, which
	// no person commenting on the issue can pose as.
	viewer, err := gh.Viewer(ctx)
	botOnly := errors.Is(err, github.ErrForbidden)
	if err != nil && !botOnly {
		return github.Comment{}, false, err
	}
	page, err := gh.Comments(ctx, ref, time.Time{}, "")
	if err != nil {
		return github.Comment{}, false, err
	}
	want := MarkerOf(a)
	for _, c := range page.Comments {
		mine := strings.EqualFold(c.User.Login, viewer)
		if botOnly {
			mine = strings.EqualFold(c.User.Type, "Bot")
		}
		if !mine {
			continue
		}
		if m, ok := ParseMarker(c.Body); ok && m.ID == want.ID && m.Team == want.Team && m.Agent == want.Agent && m.Run == want.Run {
			return c, true, nil
		}
	}
	return github.Comment{}, false, nil
}

// self is the token's own login for judging ask a's replies: GET /user, or,
// for a GitHub App or Actions token that may not read /user (403), the
// author of the question comment, which that token posted. The comments in
// hand may be empty (a 304), so the fallback reads them again without an
// ETag. Either way the login is kept.
func (c *GitHubChannel) self(ctx context.Context, gh GitHub, ref github.IssueRef, a mailbox.Ask, from time.Time, comments []github.Comment) (string, error) {
	v, err := c.viewerLogin(ctx, gh)
	if !errors.Is(err, github.ErrForbidden) {
		return v, err
	}
	author := func(cs []github.Comment) string {
		for _, cm := range cs {
			if cm.ID == a.CommentID {
				return cm.User.Login
			}
		}
		return ""
	}
	login := author(comments)
	if login == "" {
		page, ferr := gh.Comments(ctx, ref, from, "")
		if ferr != nil {
			return "", ferr
		}
		login = author(page.Comments)
	}
	if login == "" {
		return "", err
	}
	c.viewer = login
	return login, nil
}

func (c *GitHubChannel) viewerLogin(ctx context.Context, gh GitHub) (string, error) {
	if c.viewer != "" {
		return c.viewer, nil
	}
	v, err := gh.Viewer(ctx)
	if err != nil {
		return "", fmt.Errorf("find the token's own login: %w", err)
	}
	c.viewer = v
	return v, nil
}

// read lists the replies after the question (and, for an approval, the
// reactions on it) with conditional requests, and judges them. When nothing
// qualifies, the ETags are kept so the next pass gets 304 Not Modified
// (which costs no rate limit) until something changes. An ETag is kept under
// a key naming the ask, the since time and the rules, and only for an
// evaluation that found nothing, so a 304 always means "still nothing".
func (c *GitHubChannel) read(ctx context.Context, db *mailbox.DB, gh GitHub, ref github.IssueRef, a mailbox.Ask) (mailbox.Decision, bool, error) {
	since, err := db.AskQuestionTime(ctx, a)
	if err != nil {
		return mailbox.Decision{}, false, err
	}
	rules := fingerprint(a.Kind, c.deciders, gh.Identity())
	base := fmt.Sprintf("%s/repos/%s/%s/issues/%d", gh.BaseURL(), ref.Owner, ref.Repo, ref.Number)
	ckey := fmt.Sprintf("%s/comments?since=%s ask=%d rules=%s", base, sinceParam(since), a.ID, rules)
	etag, err := db.ETag(ctx, ckey)
	if err != nil {
		return mailbox.Decision{}, false, err
	}
	// GitHub's since keeps comments updated *after* it, and the question's
	// own second may hold a reply: ask for a minute more. The id filter in
	// FindAnswer drops everything up to the question anyway.
	from := since
	if !from.IsZero() {
		from = from.Add(-time.Minute)
	}
	page, err := gh.Comments(ctx, ref, from, etag)
	if err != nil {
		return mailbox.Decision{}, false, err
	}
	var rkey string
	var rpage github.ReactionPage
	rpage.NotModified = true
	if a.Kind == mailbox.KindApproval {
		rkey = fmt.Sprintf("%s/comments/%d/reactions ask=%d rules=%s", base, a.CommentID, a.ID, rules)
		retag, err := db.ETag(ctx, rkey)
		if err != nil {
			return mailbox.Decision{}, false, err
		}
		if rpage, err = gh.Reactions(ctx, ref, a.CommentID, retag); err != nil {
			return mailbox.Decision{}, false, err
		}
	}
	if page.NotModified && rpage.NotModified {
		return mailbox.Decision{}, false, nil
	}
	if a.Kind == mailbox.KindApproval && page.NotModified {
		// New reactions on unchanged comments: read the comments anyway,
		// for FindAnswer to see whether the question was edited.
		if page, err = gh.Comments(ctx, ref, from, ""); err != nil {
			return mailbox.Decision{}, false, err
		}
	}
	if since.IsZero() {
		for _, cm := range page.Comments {
			if cm.ID == a.CommentID {
				if err := db.SetAskQuestionTime(ctx, a, cm.CreatedAt); err != nil {
					return mailbox.Decision{}, false, err
				}
			}
		}
	}
	dec, found, err := FindAnswer(Input{
		Ask: a, Comments: page.Comments, Reactions: rpage.Reactions, Deciders: c.deciders,
		Viewer:      func() (string, error) { return c.self(ctx, gh, ref, a, from, page.Comments) },
		IssueAuthor: func() (string, error) { return c.issueAuthor(ctx, gh, ref) },
	})
	if err != nil || found {
		return dec, found, err
	}
	// A listing of 100 or more may span pages, and an ETag covers only the
	// first: keep it only for a listing that fit in one page.
	if !page.NotModified && page.ETag != "" && len(page.Comments) < 100 {
		if err := db.SetETag(ctx, ckey, page.ETag); err != nil {
			return mailbox.Decision{}, false, err
		}
	}
	if rkey != "" && !rpage.NotModified && rpage.ETag != "" && len(rpage.Reactions) < 100 {
		if err := db.SetETag(ctx, rkey, rpage.ETag); err != nil {
			return mailbox.Decision{}, false, err
		}
	}
	return mailbox.Decision{}, false, nil
}

func sinceParam(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func (c *GitHubChannel) issueAuthor(ctx context.Context, gh GitHub, ref github.IssueRef) (string, error) {
	if a, ok := c.authors[ref.String()]; ok {
		return a, nil
	}
	is, err := gh.Issue(ctx, ref)
	if err != nil {
		return "", fmt.Errorf("find the issue's author: %w", err)
	}
	c.authors[ref.String()] = is.User.Login
	return is.User.Login, nil
}
