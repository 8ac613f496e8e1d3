// Package githubtest is a stand-in for the GitHub REST API, for tests.
//
// It serves the endpoints teamkit's github client uses (GET /user, GET an
// issue, GET/POST issue comments, GET comment reactions) with GitHub's
// behaviour where it matters: token authentication, JSON error bodies,
// since filtering, per_page/page pagination with Link headers, strong ETags
// with If-None-Match → 304, and rate-limit headers (304s do not count).
//
// Use NewServer in Go tests and drive it with its methods. Server is also an
// http.Handler, so an end-to-end harness serves it on a real listener, points
// GITHUB_API_URL at it, and drives it with the same methods (escalate_test.go's
// ghfake command does, from testscript).
//
// Internal: a test kit; only tests import it, never a shipped binary.
package githubtest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

const (
	// DefaultToken is the token accepted until SetTokens is called.
	DefaultToken = "test-token"
	// DefaultViewer is the login GET /user returns and new comments are
	// attributed to until SetViewer is called.
	DefaultViewer = "teamkit-bot"
	// DefaultViewerAssociation is the author_association of comments posted
	// through the API until SetViewerAssociation is called.
	DefaultViewerAssociation = "NONE"
	// RateLimit is the X-RateLimit-Limit the server reports.
	RateLimit = 5000
)

// defaultEpoch is where the default clock starts.
var defaultEpoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// validReactions are the reaction contents GitHub accepts.
var validReactions = map[string]bool{
	"+1": true, "-1": true, "laugh": true, "confused": true,
	"heart": true, "hooray": true, "rocket": true, "eyes": true,
}

// Comment is an issue comment as stored by the server.
type Comment struct {
	ID                int64     `json:"id"`
	Owner             string    `json:"owner"`
	Repo              string    `json:"repo"`
	Number            int       `json:"number"`
	Login             string    `json:"login"`
	AuthorAssociation string    `json:"author_association"`
	Body              string    `json:"body"`
	CreatedAt         time.Time `json:"created_at"`
	UpdatedAt         time.Time `json:"updated_at"`
}

// Reaction is a reaction on a comment as stored by the server.
type Reaction struct {
	ID        int64     `json:"id"`
	CommentID int64     `json:"comment_id"`
	Login     string    `json:"login"`
	Content   string    `json:"content"`
	CreatedAt time.Time `json:"created_at"`
}

// Request is one entry of the request log (admin requests are not logged).
type Request struct {
	Method      string `json:"method"`
	Path        string `json:"path"`
	Query       string `json:"query,omitempty"`
	Status      int    `json:"status"` // 0 for a dropped connection
	IfNoneMatch string `json:"if_none_match,omitempty"`
	Dropped     bool   `json:"dropped,omitempty"`
	Injected    bool   `json:"injected,omitempty"` // answered by an injected failure
}

// Counts summarises the request log.
type Counts struct {
	Total       int `json:"total"`
	NotModified int `json:"not_modified"`
	Dropped     int `json:"dropped"`
	Injected    int `json:"injected"`
}

// Failure makes the next Count requests whose path starts with PathPrefix
// (and whose method is Method, when set) fail with Status and Headers, or,
// with Drop, have their connection closed without a response. Count < 0
// means every matching request, until ClearFailures.
type Failure struct {
	Count      int               `json:"count"`
	PathPrefix string            `json:"path_prefix,omitempty"`
	Method     string            `json:"method,omitempty"`
	Status     int               `json:"status,omitempty"`
	Headers    map[string]string `json:"headers,omitempty"`
	Message    string            `json:"message,omitempty"`
	Drop       bool              `json:"drop,omitempty"`
}

type issueKey struct {
	owner, repo string
	number      int
}

func (k issueKey) String() string { return fmt.Sprintf("%s/%s#%d", k.owner, k.repo, k.number) }

type issue struct {
	key       issueKey
	id        int64
	author    string
	title     string
	state     string
	createdAt time.Time
}

// Server is the fake GitHub API. All methods are safe for concurrent use.
type Server struct {
	// URL is the base URL of the listener started by NewServer ("" for New).
	URL string
	ts  *httptest.Server

	mu          sync.Mutex
	tokens      map[string]bool
	viewer      string
	viewerAssoc string
	repos       map[string]bool // "owner/repo", lower-cased
	issues      map[issueKey]*issue
	comments    map[int64]*Comment
	reactions   map[int64][]*Reaction // by comment id
	users       map[string]int64
	nextID      int64
	clock       func() time.Time
	epoch       time.Time
	step        time.Duration
	ticks       int64
	failures    []*Failure
	log         []Request
	remaining   int
	reset       time.Time
}

// New returns a Server that is not listening; serve it with any http.Server
// (it is an http.Handler).
func New() *Server {
	s := &Server{}
	s.resetLocked()
	return s
}

// NewServer starts a Server on an httptest listener (127.0.0.1:random) and
// sets URL; Close it when done.
func NewServer() *Server {
	s := New()
	s.ts = httptest.NewServer(s)
	s.URL = s.ts.URL
	return s
}

// Close stops the listener started by NewServer.
func (s *Server) Close() {
	if s.ts != nil {
		s.ts.Close()
	}
}

// CloseClientConnections closes connections open to the NewServer listener.
func (s *Server) CloseClientConnections() {
	if s.ts != nil {
		s.ts.CloseClientConnections()
	}
}

func (s *Server) resetLocked() {
	s.tokens = map[string]bool{DefaultToken: true}
	s.viewer = DefaultViewer
	s.viewerAssoc = DefaultViewerAssociation
	s.repos = map[string]bool{}
	s.issues = map[issueKey]*issue{}
	s.comments = map[int64]*Comment{}
	s.reactions = map[int64][]*Reaction{}
	s.users = map[string]int64{}
	s.nextID = 1000
	s.clock = nil
	s.epoch = defaultEpoch
	s.step = time.Second
	s.ticks = 0
	s.failures = nil
	s.log = nil
	s.remaining = RateLimit
	s.reset = time.Now().Add(time.Hour).Truncate(time.Second)
}

// Reset restores the initial state: no issues, default token and viewer,
// default clock, empty log, full rate limit.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resetLocked()
}

// SetTokens replaces the set of accepted tokens.
func (s *Server) SetTokens(tokens ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens = map[string]bool{}
	for _, t := range tokens {
		if t != "" {
			s.tokens[t] = true
		}
	}
}

// SetViewer sets the login of the token's user (GET /user, author of posted comments).
func (s *Server) SetViewer(login string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.viewer = login
}

// SetViewerAssociation sets the author_association of comments posted
// through the API.
func (s *Server) SetViewerAssociation(association string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.viewerAssoc = association
}

// SetClock replaces the clock that stamps writes. The default clock starts at
// 2024-01-01T00:00:00Z and advances one second per write (see SetEpoch).
func (s *Server) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock = now
}

// SetEpoch restores the default stepping clock, starting at epoch and
// advancing step per write.
func (s *Server) SetEpoch(epoch time.Time, step time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock, s.epoch, s.step, s.ticks = nil, epoch.UTC(), step, 0
}

// SetRateLimit sets X-RateLimit-Remaining and X-RateLimit-Reset. While
// remaining is 0, API requests get 403 "API rate limit exceeded".
func (s *Server) SetRateLimit(remaining int, reset time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.remaining = max(remaining, 0)
	if !reset.IsZero() {
		s.reset = reset.Truncate(time.Second)
	}
}

// RateRemaining returns the current X-RateLimit-Remaining.
func (s *Server) RateRemaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.remaining
}

func (s *Server) nowLocked() time.Time {
	if s.clock != nil {
		return s.clock().UTC()
	}
	t := s.epoch.Add(time.Duration(s.ticks) * s.step)
	s.ticks++
	return t
}

func (s *Server) userIDLocked(login string) int64 {
	if id, ok := s.users[login]; ok {
		return id
	}
	id := int64(len(s.users) + 1)
	s.users[login] = id
	return id
}

func (s *Server) newIDLocked() int64 {
	s.nextID++
	return s.nextID
}

// AddIssue creates (or replaces the author of) issue owner/repo#number,
// titled "Issue <number>".
func (s *Server) AddIssue(owner, repo string, number int, author string) error {
	return s.addIssue(owner, repo, number, author, "", "")
}

func (s *Server) addIssue(owner, repo string, number int, author, title, state string) error {
	if owner == "" || repo == "" || number <= 0 || author == "" {
		return fmt.Errorf("add issue: owner, repo, positive number and author are required")
	}
	if title == "" {
		title = fmt.Sprintf("Issue %d", number)
	}
	if state == "" {
		state = "open"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := issueKey{owner, repo, number}
	s.repos[strings.ToLower(owner+"/"+repo)] = true
	if is, ok := s.issues[k]; ok {
		is.author, is.title, is.state = author, title, state
		return nil
	}
	s.issues[k] = &issue{key: k, id: s.newIDLocked(), author: author, title: title, state: state, createdAt: s.nowLocked()}
	return nil
}

// AddComment adds a comment by login to an existing issue and returns its id.
func (s *Server) AddComment(owner, repo string, number int, login, association, body string) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addCommentLocked(issueKey{owner, repo, number}, login, association, body)
}

func (s *Server) addCommentLocked(k issueKey, login, association, body string) (int64, error) {
	if _, ok := s.issues[k]; !ok {
		return 0, fmt.Errorf("add comment: no issue %s", k)
	}
	if login == "" {
		return 0, fmt.Errorf("add comment: login is required")
	}
	if association == "" {
		association = "NONE"
	}
	now := s.nowLocked()
	c := &Comment{ID: s.newIDLocked(), Owner: k.owner, Repo: k.repo, Number: k.number,
		Login: login, AuthorAssociation: association, Body: body, CreatedAt: now, UpdatedAt: now}
	s.comments[c.ID] = c
	return c.ID, nil
}

// EditComment replaces a comment's body and bumps its updated_at.
func (s *Server) EditComment(id int64, body string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.comments[id]
	if !ok {
		return fmt.Errorf("edit comment: no comment %d", id)
	}
	c.Body, c.UpdatedAt = body, s.nowLocked()
	return nil
}

// AddReaction adds a reaction (content "+1", "-1", "laugh", "confused",
// "heart", "hooray", "rocket" or "eyes") by login to a comment.
func (s *Server) AddReaction(commentID int64, login, content string) (int64, error) {
	if !validReactions[content] {
		return 0, fmt.Errorf("add reaction: invalid content %q", content)
	}
	if login == "" {
		return 0, fmt.Errorf("add reaction: login is required")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.comments[commentID]; !ok {
		return 0, fmt.Errorf("add reaction: no comment %d", commentID)
	}
	r := &Reaction{ID: s.newIDLocked(), CommentID: commentID, Login: login, Content: content, CreatedAt: s.nowLocked()}
	s.reactions[commentID] = append(s.reactions[commentID], r)
	return r.ID, nil
}

// Comments returns the comments of an issue, oldest first.
func (s *Server) Comments(owner, repo string, number int) []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Comment
	for _, c := range s.issueCommentsLocked(issueKey{owner, repo, number}) {
		out = append(out, *c)
	}
	return out
}

// AllComments returns every comment on every issue, oldest first.
func (s *Server) AllComments() []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Comment, 0, len(s.comments))
	for _, c := range s.comments {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func (s *Server) issueCommentsLocked(k issueKey) []*Comment {
	var out []*Comment
	for _, c := range s.comments {
		if c.Owner == k.owner && c.Repo == k.repo && c.Number == k.number {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Fail queues an injected failure (see Failure).
func (s *Server) Fail(f Failure) error {
	if !f.Drop && (f.Status < 100 || f.Status > 599) {
		return fmt.Errorf("fail: status %d is not an HTTP status (or set drop)", f.Status)
	}
	if f.Count == 0 {
		return fmt.Errorf("fail: count must be positive (or negative for every request)")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures = append(s.failures, &f)
	return nil
}

// ClearFailures removes every queued failure.
func (s *Server) ClearFailures() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures = nil
}

// Requests returns a copy of the request log.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.log...)
}

// ClearRequests empties the request log.
func (s *Server) ClearRequests() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = nil
}

// Counts summarises the request log.
func (s *Server) Counts() Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	var c Counts
	for _, r := range s.log {
		c.Total++
		switch {
		case r.Dropped:
			c.Dropped++
		case r.Status == http.StatusNotModified:
			c.NotModified++
		}
		if r.Injected {
			c.Injected++
		}
	}
	return c
}

// reply is a computed response, written after the lock is released.
type reply struct {
	status int
	header http.Header
	body   []byte
	drop   bool
}

// ServeHTTP serves the REST API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rep := s.handleAPI(r)
	if rep.drop {
		hj, ok := w.(http.Hijacker)
		if !ok {
			panic(http.ErrAbortHandler) // closes the connection on HTTP/2 and others
		}
		conn, _, err := hj.Hijack()
		if err == nil {
			conn.Close()
		}
		return
	}
	for k, vs := range rep.header {
		w.Header()[k] = vs
	}
	w.WriteHeader(rep.status)
	if len(rep.body) > 0 && rep.status != http.StatusNotModified {
		w.Write(rep.body)
	}
}

func (s *Server) handleAPI(r *http.Request) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	entry := Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, IfNoneMatch: r.Header.Get("If-None-Match")}
	rep := s.routeLocked(r, &entry)
	entry.Status = rep.status
	entry.Dropped = rep.drop
	if rep.drop {
		entry.Status = 0
	}
	s.log = append(s.log, entry)
	return rep
}

func (s *Server) routeLocked(r *http.Request, entry *Request) reply {
	if f := s.takeFailureLocked(r); f != nil {
		entry.Injected = true
		if f.Drop {
			return reply{drop: true}
		}
		rep := s.jsonLocked(f.Status, errorBody(f.Message, f.Status))
		for k, v := range f.Headers {
			rep.header.Set(k, v)
		}
		return rep
	}
	if !s.authorizedLocked(r.Header.Get("Authorization")) {
		return s.jsonLocked(http.StatusUnauthorized, map[string]string{
			"message":           "Bad credentials",
			"documentation_url": "https://docs.github.com/rest",
		})
	}
	if s.remaining <= 0 {
		rep := s.jsonLocked(http.StatusForbidden, map[string]string{
			"message":           "API rate limit exceeded for user ID 1.",
			"documentation_url": "https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting",
		})
		return rep
	}
	rep := s.dispatchLocked(r)
	if r.Method == http.MethodGet && rep.status == http.StatusOK {
		etag := etagOf(rep.body)
		rep.header.Set("ETag", etag)
		if etagMatches(r.Header.Get("If-None-Match"), etag) {
			rep.status = http.StatusNotModified
			rep.body = nil
			rep.header.Del("Content-Type")
			rep.header.Del("Link")
			s.rateHeadersLocked(rep.header) // a 304 costs nothing
			return rep
		}
	}
	s.remaining--
	s.rateHeadersLocked(rep.header)
	return rep
}

func (s *Server) takeFailureLocked(r *http.Request) *Failure {
	for i, f := range s.failures {
		if !strings.HasPrefix(r.URL.Path, f.PathPrefix) {
			continue
		}
		if f.Method != "" && !strings.EqualFold(f.Method, r.Method) {
			continue
		}
		if f.Count > 0 {
			f.Count--
			if f.Count == 0 {
				s.failures = append(s.failures[:i:i], s.failures[i+1:]...)
			}
		}
		return f
	}
	return nil
}

func (s *Server) authorizedLocked(h string) bool {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !(strings.EqualFold(scheme, "token") || strings.EqualFold(scheme, "bearer")) {
		return false
	}
	tok = strings.TrimSpace(tok)
	return tok != "" && s.tokens[tok]
}

func (s *Server) rateHeadersLocked(h http.Header) {
	h.Set("X-RateLimit-Limit", strconv.Itoa(RateLimit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(max(s.remaining, 0)))
	h.Set("X-RateLimit-Used", strconv.Itoa(RateLimit-max(s.remaining, 0)))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(s.reset.Unix(), 10))
	h.Set("X-RateLimit-Resource", "core")
}

// jsonLocked builds a JSON reply carrying the rate-limit headers.
func (s *Server) jsonLocked(status int, v any) reply {
	body, err := json.Marshal(v)
	if err != nil {
		body = []byte(`{"message":"fake server: cannot encode response"}`)
		status = http.StatusInternalServerError
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json; charset=utf-8")
	s.rateHeadersLocked(h)
	return reply{status: status, header: h, body: body}
}

func errorBody(msg string, status int) map[string]string {
	if msg == "" {
		switch {
		case status == http.StatusTooManyRequests || status == http.StatusForbidden:
			msg = "API rate limit exceeded for user ID 1."
		case status >= 500:
			msg = "Server Error"
		default:
			msg = http.StatusText(status)
		}
	}
	return map[string]string{"message": msg, "documentation_url": "https://docs.github.com/rest"}
}

func (s *Server) notFoundLocked() reply {
	return s.jsonLocked(http.StatusNotFound, map[string]string{
		"message":           "Not Found",
		"documentation_url": "https://docs.github.com/rest",
	})
}

// dispatchLocked routes an authenticated API request.
func (s *Server) dispatchLocked(r *http.Request) reply {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case len(parts) == 1 && parts[0] == "user" && r.Method == http.MethodGet:
		return s.jsonLocked(http.StatusOK, s.userJSONLocked(s.viewer))
	case len(parts) >= 4 && parts[0] == "repos":
		owner, repo := parts[1], parts[2]
		if !s.repos[strings.ToLower(owner+"/"+repo)] {
			return s.notFoundLocked()
		}
		rest := parts[3:]
		switch {
		case len(rest) == 2 && rest[0] == "issues" && r.Method == http.MethodGet:
			is := s.lookupIssueLocked(owner, repo, rest[1])
			if is == nil {
				return s.notFoundLocked()
			}
			return s.jsonLocked(http.StatusOK, s.issueJSONLocked(r, is))
		case len(rest) == 3 && rest[0] == "issues" && rest[2] == "comments":
			is := s.lookupIssueLocked(owner, repo, rest[1])
			if is == nil {
				return s.notFoundLocked()
			}
			switch r.Method {
			case http.MethodGet:
				return s.listCommentsLocked(r, is)
			case http.MethodPost:
				return s.createCommentLocked(r, is)
			}
		case len(rest) == 3 && rest[0] == "issues" && rest[1] == "comments" && r.Method == http.MethodGet:
			c := s.lookupCommentLocked(owner, repo, rest[2])
			if c == nil {
				return s.notFoundLocked()
			}
			return s.jsonLocked(http.StatusOK, s.commentJSONLocked(r, c))
		case len(rest) == 4 && rest[0] == "issues" && rest[1] == "comments" && rest[3] == "reactions" && r.Method == http.MethodGet:
			c := s.lookupCommentLocked(owner, repo, rest[2])
			if c == nil {
				return s.notFoundLocked()
			}
			return s.listReactionsLocked(r, c)
		}
	}
	return s.notFoundLocked()
}

func (s *Server) lookupIssueLocked(owner, repo, num string) *issue {
	n, err := strconv.Atoi(num)
	if err != nil || n <= 0 {
		return nil
	}
	for k, is := range s.issues {
		if k.number == n && strings.EqualFold(k.owner, owner) && strings.EqualFold(k.repo, repo) {
			return is
		}
	}
	return nil
}

func (s *Server) lookupCommentLocked(owner, repo, id string) *Comment {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return nil
	}
	c, ok := s.comments[n]
	if !ok || !strings.EqualFold(c.Owner, owner) || !strings.EqualFold(c.Repo, repo) {
		return nil
	}
	return c
}

func (s *Server) listCommentsLocked(r *http.Request, is *issue) reply {
	q := r.URL.Query()
	var since time.Time
	if v := q.Get("since"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return s.jsonLocked(http.StatusUnprocessableEntity, map[string]any{
				"message": "Validation Failed",
				"errors":  []map[string]string{{"resource": "IssueComment", "field": "since", "code": "invalid"}},
			})
		}
		since = t
	}
	var all []*Comment
	for _, c := range s.issueCommentsLocked(is.key) {
		if since.IsZero() || !c.UpdatedAt.Before(since) {
			all = append(all, c)
		}
	}
	page, link := paginate(r, len(all))
	items := make([]any, 0, page.hi-page.lo)
	for _, c := range all[page.lo:page.hi] {
		items = append(items, s.commentJSONLocked(r, c))
	}
	rep := s.jsonLocked(http.StatusOK, items)
	if link != "" {
		rep.header.Set("Link", link)
	}
	return rep
}

func (s *Server) listReactionsLocked(r *http.Request, c *Comment) reply {
	content := r.URL.Query().Get("content")
	var all []*Reaction
	for _, re := range s.reactions[c.ID] {
		if content == "" || re.Content == content {
			all = append(all, re)
		}
	}
	page, link := paginate(r, len(all))
	items := make([]any, 0, page.hi-page.lo)
	for _, re := range all[page.lo:page.hi] {
		items = append(items, map[string]any{
			"id":         re.ID,
			"node_id":    fmt.Sprintf("REA_%d", re.ID),
			"user":       s.userJSONLocked(re.Login),
			"content":    re.Content,
			"created_at": re.CreatedAt.UTC().Format(time.RFC3339),
		})
	}
	rep := s.jsonLocked(http.StatusOK, items)
	if link != "" {
		rep.header.Set("Link", link)
	}
	return rep
}

func (s *Server) createCommentLocked(r *http.Request, is *issue) reply {
	var in struct {
		Body *string `json:"body"`
	}
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 1<<20))
	if err := dec.Decode(&in); err != nil {
		return s.jsonLocked(http.StatusBadRequest, map[string]string{
			"message":           "Problems parsing JSON",
			"documentation_url": "https://docs.github.com/rest/issues/comments#create-an-issue-comment",
		})
	}
	if in.Body == nil || strings.TrimSpace(*in.Body) == "" {
		return s.jsonLocked(http.StatusUnprocessableEntity, map[string]any{
			"message":           "Validation Failed",
			"errors":            []map[string]string{{"resource": "IssueComment", "field": "body", "code": "missing_field"}},
			"documentation_url": "https://docs.github.com/rest/issues/comments#create-an-issue-comment",
		})
	}
	id, err := s.addCommentLocked(is.key, s.viewer, s.viewerAssoc, *in.Body)
	if err != nil {
		return s.notFoundLocked()
	}
	rep := s.jsonLocked(http.StatusCreated, s.commentJSONLocked(r, s.comments[id]))
	rep.header.Set("Location", apiBase(r)+fmt.Sprintf("/repos/%s/%s/issues/comments/%d", is.key.owner, is.key.repo, id))
	return rep
}

func apiBase(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

func userType(login string) string {
	if strings.HasSuffix(login, "[bot]") {
		return "Bot"
	}
	return "User"
}

func (s *Server) userJSONLocked(login string) map[string]any {
	return map[string]any{
		"login":    login,
		"id":       s.userIDLocked(login),
		"type":     userType(login),
		"html_url": "https://github.com/" + url.PathEscape(login),
	}
}

func (s *Server) issueJSONLocked(r *http.Request, is *issue) map[string]any {
	k := is.key
	return map[string]any{
		"id":         is.id,
		"number":     k.number,
		"title":      is.title,
		"state":      is.state,
		"user":       s.userJSONLocked(is.author),
		"url":        apiBase(r) + fmt.Sprintf("/repos/%s/%s/issues/%d", k.owner, k.repo, k.number),
		"html_url":   fmt.Sprintf("https://github.com/%s/%s/issues/%d", k.owner, k.repo, k.number),
		"comments":   len(s.issueCommentsLocked(k)),
		"created_at": is.createdAt.UTC().Format(time.RFC3339),
		"updated_at": is.createdAt.UTC().Format(time.RFC3339),
	}
}

func (s *Server) commentJSONLocked(r *http.Request, c *Comment) map[string]any {
	return map[string]any{
		"id":                 c.ID,
		"node_id":            fmt.Sprintf("IC_%d", c.ID),
		"url":                apiBase(r) + fmt.Sprintf("/repos/%s/%s/issues/comments/%d", c.Owner, c.Repo, c.ID),
		"html_url":           fmt.Sprintf("https://github.com/%s/%s/issues/%d#issuecomment-%d", c.Owner, c.Repo, c.Number, c.ID),
		"issue_url":          apiBase(r) + fmt.Sprintf("/repos/%s/%s/issues/%d", c.Owner, c.Repo, c.Number),
		"body":               c.Body,
		"user":               s.userJSONLocked(c.Login),
		"author_association": c.AuthorAssociation,
		"created_at":         c.CreatedAt.UTC().Format(time.RFC3339),
		"updated_at":         c.UpdatedAt.UTC().Format(time.RFC3339),
	}
}

type window struct{ lo, hi int }

// paginate applies per_page (default 30, max 100) and page (1-based) to n
// items and builds GitHub's Link header.
func paginate(r *http.Request, n int) (window, string) {
	q := r.URL.Query()
	per := 30
	if v, err := strconv.Atoi(q.Get("per_page")); err == nil && v > 0 {
		per = min(v, 100)
	}
	page := 1
	if v, err := strconv.Atoi(q.Get("page")); err == nil && v > 0 {
		page = v
	}
	last := max((n+per-1)/per, 1)
	lo := min((page-1)*per, n)
	hi := min(lo+per, n)
	link := func(p int, rel string) string {
		q2 := r.URL.Query()
		q2.Set("page", strconv.Itoa(p))
		q2.Set("per_page", strconv.Itoa(per))
		return fmt.Sprintf(`<%s%s?%s>; rel="%s"`, apiBase(r), r.URL.Path, q2.Encode(), rel)
	}
	var links []string
	if page < last {
		links = append(links, link(page+1, "next"), link(last, "last"))
	}
	if page > 1 {
		links = append(links, link(1, "first"), link(min(page-1, last), "prev"))
	}
	return window{lo, hi}, strings.Join(links, ", ")
}

// etagOf is a strong ETag computed from the response body.
func etagOf(body []byte) string {
	sum := sha256.Sum256(body)
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}

// etagMatches implements If-None-Match's weak comparison.
func etagMatches(header, etag string) bool {
	if header == "" {
		return false
	}
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == etag {
			return true
		}
	}
	return false
}
