package escalate

import (
	"errors"
	"fmt"
	"time"

	"github.com/teamkit/teamkit/pkg/github"
	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/text"
)

// Reading the GitHub channel: an awaiting ask's issue comments and
// reactions, conditionally (ETags), and who the token and the issue's author are.

func (p *pass) client() (GitHub, error) {
	if p.r.gh != nil {
		return p.r.gh, nil
	}
	if p.ghErr != nil {
		return nil, p.ghErr
	}
	gh, err := p.r.GitHub()
	if err != nil {
		p.ghErr = err
		return nil, err
	}
	p.r.gh = gh
	return gh, nil
}

// self is the token's own login for judging ask a's replies: GET /user, or,
// for a GitHub App or Actions token that may not read /user (403), the
// author of the question comment, which that token posted. The comments in
// hand may be empty (a 304), so the fallback reads them again without an
// ETag. Either way the login is kept for the rest of the pass.
func (p *pass) self(gh GitHub, ref github.IssueRef, a mailbox.Ask, from time.Time, comments []github.Comment) (string, error) {
	v, err := p.viewer()
	if !errors.Is(err, github.ErrForbidden) {
		return v, err
	}
	author := func(cs []github.Comment) string {
		for _, c := range cs {
			if c.ID == a.CommentID {
				return c.User.Login
			}
		}
		return ""
	}
	login := author(comments)
	if login == "" {
		page, ferr := gh.Comments(p.ctx, ref, from, "")
		if ferr != nil {
			return "", ferr
		}
		login = author(page.Comments)
	}
	if login == "" {
		return "", err
	}
	p.r.viewer = login
	return login, nil
}

func (p *pass) viewer() (string, error) {
	if p.r.viewer != "" {
		return p.r.viewer, nil
	}
	v, err := p.r.gh.Viewer(p.ctx)
	if err != nil {
		return "", fmt.Errorf("find the token's own login: %w", err)
	}
	p.r.viewer = v
	return v, nil
}

// github handles one awaiting ask on an issue. Only database errors are
// returned; everything else is a reported failure.
func (p *pass) github(a mailbox.Ask) error {
	gh, err := p.client()
	if err != nil {
		// One line per pass, not one per ask: every GitHub ask waits on it.
		if !p.ghReported {
			p.ghReported = true
			p.count()
			p.r.note("error: github: %s; asks on issues stay awaiting", text.OneLine(err.Error()))
		}
		return nil
	}
	if a.CommentID == 0 {
		// The question never reached the issue (ask failed to post it):
		// post it now, once, and read replies from the next pass on.
		posted, err := Post(p.ctx, p.r.DB, gh, a, false)
		if err != nil {
			p.fail(a, err)
			return nil
		}
		p.r.note("posted ask %d to %s: %s", posted.ID, posted.Issue, posted.CommentURL)
		return nil
	}
	if a.Kind == mailbox.KindApproval && !p.deciders.Configured {
		if p.decidersErr == nil {
			p.r.note("warning: ask %d (%s/%s, %s) asks for approval, but no deciders are configured "+
				"(--deciders or TEAMKIT_DECIDERS); nothing can decide it, so it stays awaiting", a.ID, a.Team, a.Agent, a.Issue)
		}
		return nil
	}
	ref, err := github.ParseIssueRef(a.Issue)
	if err != nil {
		p.fail(a, err)
		return nil
	}
	dec, found, err := p.read(gh, ref, a)
	if err != nil {
		var dbErr *mailbox.Error
		if errors.As(err, &dbErr) {
			return err
		}
		p.fail(a, err)
		return nil
	}
	if !found {
		return nil
	}
	return p.claim(a, dec)
}

// read lists the replies after the question (and, for an approval, the
// reactions on it) with conditional requests, and judges them. When nothing
// qualifies, the ETags are kept so the next pass gets 304 Not Modified
// (which costs no rate limit) until something changes. An ETag is kept under
// a key naming the ask, the since time and the rules, and only for an
// evaluation that found nothing, so a 304 always means "still nothing".
func (p *pass) read(gh GitHub, ref github.IssueRef, a mailbox.Ask) (mailbox.Decision, bool, error) {
	db, ctx := p.r.DB, p.ctx
	since, err := db.AskQuestionTime(ctx, a)
	if err != nil {
		return mailbox.Decision{}, false, err
	}
	rules := fingerprint(a.Kind, p.deciders, gh.Identity())
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
	if since.IsZero() {
		for _, c := range page.Comments {
			if c.ID == a.CommentID {
				if err := db.SetAskQuestionTime(ctx, a, c.CreatedAt); err != nil {
					return mailbox.Decision{}, false, err
				}
			}
		}
	}
	dec, found, err := FindAnswer(Input{
		Ask: a, Comments: page.Comments, Reactions: rpage.Reactions, Deciders: p.deciders,
		Viewer:      func() (string, error) { return p.self(gh, ref, a, from, page.Comments) },
		IssueAuthor: func() (string, error) { return p.issueAuthor(gh, ref) },
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

func (p *pass) issueAuthor(gh GitHub, ref github.IssueRef) (string, error) {
	if a, ok := p.authors[ref.String()]; ok {
		return a, nil
	}
	is, err := gh.Issue(p.ctx, ref)
	if err != nil {
		return "", fmt.Errorf("find the issue's author: %w", err)
	}
	p.authors[ref.String()] = is.User.Login
	return is.User.Login, nil
}
