package github

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// User is the author of an issue, comment or reaction.
type User struct {
	Login string `json:"login"`
	Type  string `json:"type"` // "User", "Bot", "Organization"
}

// Issue is the part of a GitHub issue teamkit uses.
type Issue struct {
	Number  int    `json:"number"`
	Title   string `json:"title"`
	User    User   `json:"user"`
	State   string `json:"state"`
	HTMLURL string `json:"html_url"`
}

// Comment is an issue comment.
type Comment struct {
	ID                int64     `json:"id"`
	Body              string    `json:"body"`
	User              User      `json:"user"`
	AuthorAssociation string    `json:"author_association"`
	CreatedAt         time.Time `json:"created_at"`
	UpdatedAt         time.Time `json:"updated_at"`
	HTMLURL           string    `json:"html_url"`
}

// Reaction is an emoji reaction on a comment; Content is "+1", "-1",
// "laugh", "confused", "heart", "hooray", "rocket" or "eyes".
type Reaction struct {
	ID        int64     `json:"id"`
	Content   string    `json:"content"`
	User      User      `json:"user"`
	CreatedAt time.Time `json:"created_at"`
}

// Page is the result of a conditional comment listing. When NotModified is
// true nothing changed since the given ETag and Comments is empty; ETag is
// the first page's ETag, to pass to the next call.
type Page struct {
	Comments    []Comment
	ETag        string
	NotModified bool
}

// ReactionPage is the result of a conditional reaction listing, like Page.
type ReactionPage struct {
	Reactions   []Reaction
	ETag        string
	NotModified bool
}

// Viewer returns the login of the token's own user (GET /user).
func (c *Client) Viewer(ctx context.Context) (string, error) {
	var u User
	if err := c.getJSON(ctx, c.endpoint(nil, "user"), &u); err != nil {
		return "", err
	}
	if u.Login == "" {
		return "", fmt.Errorf("github: GET /user: response has no login")
	}
	return u.Login, nil
}

// Issue fetches one issue.
func (c *Client) Issue(ctx context.Context, ref IssueRef) (Issue, error) {
	if err := ref.validate(); err != nil {
		return Issue{}, err
	}
	var is Issue
	u := c.endpoint(nil, "repos", ref.Owner, ref.Repo, "issues", strconv.Itoa(ref.Number))
	if err := c.getJSON(ctx, u, &is); err != nil {
		return Issue{}, err
	}
	return is, nil
}

// CreateComment posts body as a new comment on the issue. See retry.go for
// when a failed POST is (and is not) retried.
func (c *Client) CreateComment(ctx context.Context, ref IssueRef, body string) (Comment, error) {
	if err := ref.validate(); err != nil {
		return Comment{}, err
	}
	if strings.TrimSpace(body) == "" {
		return Comment{}, fmt.Errorf("github: comment on %s: empty body", ref)
	}
	u := c.endpoint(nil, "repos", ref.Owner, ref.Repo, "issues", strconv.Itoa(ref.Number), "comments")
	resp, err := c.do(ctx, http.MethodPost, u, map[string]string{"body": body}, nil)
	if err != nil {
		return Comment{}, err
	}
	var cm Comment
	if err := decode(http.MethodPost, u, resp, &cm); err != nil {
		return Comment{}, err
	}
	return cm, nil
}

// Comments lists the issue's comments updated at or after since (all of them
// when since is zero), oldest first, following pagination. With a non-empty
// etag the first request is conditional: if nothing changed the result has
// NotModified set and costs no rate limit.
func (c *Client) Comments(ctx context.Context, ref IssueRef, since time.Time, etag string) (Page, error) {
	if err := ref.validate(); err != nil {
		return Page{}, err
	}
	q := url.Values{"per_page": {"100"}}
	if !since.IsZero() {
		q.Set("since", since.UTC().Format(time.RFC3339))
	}
	u := c.endpoint(q, "repos", ref.Owner, ref.Repo, "issues", strconv.Itoa(ref.Number), "comments")
	var p Page
	tag, notModified, err := c.list(ctx, u, etag, func(resp *response, pageURL string) error {
		var batch []Comment
		if err := decode(http.MethodGet, pageURL, resp, &batch); err != nil {
			return err
		}
		p.Comments = append(p.Comments, batch...)
		return nil
	})
	if err != nil {
		return Page{}, err
	}
	p.ETag, p.NotModified = tag, notModified
	return p, nil
}

// Reactions lists the reactions on an issue comment, following pagination,
// conditionally on etag like Comments.
func (c *Client) Reactions(ctx context.Context, ref IssueRef, commentID int64, etag string) (ReactionPage, error) {
	if err := ref.validate(); err != nil {
		return ReactionPage{}, err
	}
	if commentID <= 0 {
		return ReactionPage{}, fmt.Errorf("github: reactions on %s: invalid comment id %d", ref, commentID)
	}
	q := url.Values{"per_page": {"100"}}
	u := c.endpoint(q, "repos", ref.Owner, ref.Repo, "issues", "comments", strconv.FormatInt(commentID, 10), "reactions")
	var p ReactionPage
	tag, notModified, err := c.list(ctx, u, etag, func(resp *response, pageURL string) error {
		var batch []Reaction
		if err := decode(http.MethodGet, pageURL, resp, &batch); err != nil {
			return err
		}
		p.Reactions = append(p.Reactions, batch...)
		return nil
	})
	if err != nil {
		return ReactionPage{}, err
	}
	p.ETag, p.NotModified = tag, notModified
	return p, nil
}

// list GETs first (conditionally on etag) and then every Link rel="next"
// page, handing each page to add. It returns the first page's ETag.
func (c *Client) list(ctx context.Context, first, etag string, add func(*response, string) error) (string, bool, error) {
	var hdr http.Header
	if etag != "" {
		hdr = http.Header{"If-None-Match": {etag}}
	}
	resp, err := c.do(ctx, http.MethodGet, first, nil, hdr)
	if err != nil {
		return "", false, err
	}
	if resp.status == http.StatusNotModified {
		tag := resp.header.Get("ETag")
		if tag == "" {
			tag = etag
		}
		return tag, true, nil
	}
	tag := resp.header.Get("ETag")
	seen := map[string]bool{first: true}
	pageURL := first
	for pages := 1; ; pages++ {
		if err := add(resp, pageURL); err != nil {
			return "", false, err
		}
		next := nextLink(resp.header.Values("Link"))
		if next == "" {
			return tag, false, nil
		}
		nextURL, err := c.sameOrigin(next)
		if err != nil {
			return "", false, fmt.Errorf("github: GET %s: pagination: %w", urlPath(pageURL), err)
		}
		if seen[nextURL] || pages >= maxPages {
			return "", false, fmt.Errorf("github: GET %s: pagination does not end (page %d)", urlPath(first), pages)
		}
		seen[nextURL] = true
		pageURL = nextURL
		if resp, err = c.do(ctx, http.MethodGet, pageURL, nil, nil); err != nil {
			return "", false, err
		}
		if resp.status != http.StatusOK {
			return "", false, fmt.Errorf("github: GET %s: unexpected status %d on a follow-up page", urlPath(pageURL), resp.status)
		}
	}
}

// sameOrigin resolves a Link URL against the base and refuses one that
// points at another scheme or host, so pagination never leaves the API.
func (c *Client) sameOrigin(link string) (string, error) {
	u, err := c.base.Parse(link)
	if err != nil {
		return "", fmt.Errorf("bad next link %q: %w", link, err)
	}
	if u.Scheme != c.base.Scheme || !strings.EqualFold(u.Host, c.base.Host) {
		return "", fmt.Errorf("next link %q leaves %s", link, c.base.Host)
	}
	return u.String(), nil
}

// A Link header's links, `<URL>; param; param, <URL>; …`: the URL (commas
// and all, up to its ">") and its parameters; and a rel parameter's values.
var (
	linkRE = regexp.MustCompile(`<([^>]*)>((?:\s*;[^,<]*)*)`)
	relRE  = regexp.MustCompile(`(?i);\s*rel\s*=\s*"?([^";]*)`)
)

// nextLink extracts the rel="next" target from Link header values such as
// `<https://api.github.com/...&page=2>; rel="next", <...>; rel="last"`.
func nextLink(values []string) string {
	for _, v := range values {
		for _, link := range linkRE.FindAllStringSubmatch(v, -1) {
			for _, rel := range relRE.FindAllStringSubmatch(link[2], -1) {
				for _, r := range strings.Fields(rel[1]) {
					if strings.EqualFold(r, "next") {
						return link[1]
					}
				}
			}
		}
	}
	return ""
}
