package githubtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

type result struct {
	status int
	header http.Header
	body   []byte
}

func call(t *testing.T, method, url, auth, body string, hdr ...string) result {
	t.Helper()
	var rdr io.Reader
	if body != "" {
		rdr = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rdr)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return result{resp.StatusCode, resp.Header, data}
}

func decodeJSON[T any](t *testing.T, data []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("decode %s: %v", data, err)
	}
	return v
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("not a number: %q", s)
	}
	return n
}

const auth = "token " + DefaultToken

func newFixture(t *testing.T) *Server {
	t.Helper()
	s := NewServer()
	t.Cleanup(s.Close)
	if err := s.AddIssue("octo", "repo", 7, "alice"); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestAuthentication(t *testing.T) {
	s := newFixture(t)
	for _, a := range []string{"", "token nope", "Basic " + DefaultToken, "token", DefaultToken} {
		r := call(t, "GET", s.URL+"/user", a, "")
		if r.status != 401 {
			t.Errorf("auth %q: status %d, want 401", a, r.status)
		}
		m := decodeJSON[map[string]string](t, r.body)
		if m["message"] != "Bad credentials" || m["documentation_url"] == "" {
			t.Errorf("auth %q: body %s", a, r.body)
		}
	}
	for _, a := range []string{"token " + DefaultToken, "Bearer " + DefaultToken, "bearer " + DefaultToken} {
		if r := call(t, "GET", s.URL+"/user", a, ""); r.status != 200 {
			t.Errorf("auth %q: status %d, want 200", a, r.status)
		}
	}
	s.SetTokens("a", "b")
	if r := call(t, "GET", s.URL+"/user", auth, ""); r.status != 401 {
		t.Errorf("old token still accepted: %d", r.status)
	}
	if r := call(t, "GET", s.URL+"/user", "token b", ""); r.status != 200 {
		t.Errorf("new token refused: %d", r.status)
	}
}

func TestUserAndIssue(t *testing.T) {
	s := newFixture(t)
	s.SetViewer("robot[bot]")
	u := decodeJSON[map[string]any](t, call(t, "GET", s.URL+"/user", auth, "").body)
	if u["login"] != "robot[bot]" || u["type"] != "Bot" {
		t.Errorf("user = %v", u)
	}
	r := call(t, "GET", s.URL+"/repos/octo/repo/issues/7", auth, "")
	if r.status != 200 {
		t.Fatalf("issue status %d: %s", r.status, r.body)
	}
	is := decodeJSON[map[string]any](t, r.body)
	user := is["user"].(map[string]any)
	if is["number"] != 7.0 || is["title"] != "Issue 7" || is["state"] != "open" || user["login"] != "alice" ||
		is["html_url"] != "https://github.com/octo/repo/issues/7" {
		t.Errorf("issue = %v", is)
	}
	for _, p := range []string{"/repos/octo/repo/issues/8", "/repos/octo/other/issues/7", "/repos/x/y/issues/1/comments", "/nope", "/repos/octo/repo/issues/abc"} {
		r := call(t, "GET", s.URL+p, auth, "")
		if r.status != 404 || decodeJSON[map[string]string](t, r.body)["message"] != "Not Found" {
			t.Errorf("GET %s: %d %s, want 404 Not Found", p, r.status, r.body)
		}
	}
	if r := call(t, "DELETE", s.URL+"/repos/octo/repo/issues/7", auth, ""); r.status != 404 {
		t.Errorf("DELETE issue: %d, want 404", r.status)
	}
}

func TestCreateAndListComments(t *testing.T) {
	s := newFixture(t)
	s.SetViewerAssociation("CONTRIBUTOR")
	url := s.URL + "/repos/octo/repo/issues/7/comments"
	r := call(t, "POST", url, auth, `{"body":"hello"}`)
	if r.status != 201 {
		t.Fatalf("POST: %d %s", r.status, r.body)
	}
	c := decodeJSON[map[string]any](t, r.body)
	if c["body"] != "hello" || c["user"].(map[string]any)["login"] != DefaultViewer || c["author_association"] != "CONTRIBUTOR" {
		t.Errorf("created = %v", c)
	}
	if r.header.Get("Location") == "" {
		t.Error("no Location header")
	}
	if r := call(t, "POST", url, auth, `{"body":"  "}`); r.status != 422 || !strings.Contains(string(r.body), "Validation Failed") {
		t.Errorf("empty body: %d %s", r.status, r.body)
	}
	if r := call(t, "POST", url, auth, `{nope`); r.status != 400 {
		t.Errorf("bad JSON: %d %s", r.status, r.body)
	}
	if _, err := s.AddComment("octo", "repo", 7, "bob", "MEMBER", "second"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddComment("octo", "repo", 99, "bob", "MEMBER", "x"); err == nil {
		t.Error("comment on a missing issue accepted")
	}
	list := decodeJSON[[]map[string]any](t, call(t, "GET", url, auth, "").body)
	if len(list) != 2 || list[0]["body"] != "hello" || list[1]["body"] != "second" {
		t.Fatalf("list = %v", list)
	}
	t0, _ := time.Parse(time.RFC3339, list[0]["created_at"].(string))
	t1, _ := time.Parse(time.RFC3339, list[1]["created_at"].(string))
	if t1.Sub(t0) != time.Second {
		t.Errorf("clock step: %v then %v", t0, t1)
	}
	// since filters on updated_at, inclusive.
	since := list[1]["updated_at"].(string)
	got := decodeJSON[[]map[string]any](t, call(t, "GET", url+"?since="+since, auth, "").body)
	if len(got) != 1 || got[0]["body"] != "second" {
		t.Errorf("since %s: %v", since, got)
	}
	if err := s.EditComment(int64(list[0]["id"].(float64)), "edited"); err != nil {
		t.Fatal(err)
	}
	got = decodeJSON[[]map[string]any](t, call(t, "GET", url+"?since="+since, auth, "").body)
	if len(got) != 2 || got[0]["body"] != "edited" {
		t.Errorf("since after edit: %v", got)
	}
	if r := call(t, "GET", url+"?since=yesterday", auth, ""); r.status != 422 {
		t.Errorf("bad since: %d", r.status)
	}
	if cs := s.Comments("octo", "repo", 7); len(cs) != 2 || cs[0].Body != "edited" || cs[1].Login != "bob" {
		t.Errorf("Comments() = %+v", cs)
	}
	single := call(t, "GET", s.URL+fmt.Sprintf("/repos/octo/repo/issues/comments/%d", int64(list[1]["id"].(float64))), auth, "")
	if single.status != 200 || decodeJSON[map[string]any](t, single.body)["body"] != "second" {
		t.Errorf("single comment: %d %s", single.status, single.body)
	}
}

func TestPagination(t *testing.T) {
	s := newFixture(t)
	for i := 1; i <= 5; i++ {
		if _, err := s.AddComment("octo", "repo", 7, "bob", "MEMBER", fmt.Sprint("c", i)); err != nil {
			t.Fatal(err)
		}
	}
	next := s.URL + "/repos/octo/repo/issues/7/comments?per_page=2"
	var bodies []string
	for pages := 0; next != ""; pages++ {
		if pages > 5 {
			t.Fatal("pagination does not end")
		}
		r := call(t, "GET", next, auth, "")
		for _, c := range decodeJSON[[]map[string]any](t, r.body) {
			bodies = append(bodies, c["body"].(string))
		}
		next = ""
		for _, part := range strings.Split(r.header.Get("Link"), ",") {
			if strings.Contains(part, `rel="next"`) {
				next = strings.Trim(strings.TrimSpace(strings.Split(part, ";")[0]), "<>")
			}
		}
	}
	if strings.Join(bodies, " ") != "c1 c2 c3 c4 c5" {
		t.Errorf("pages gave %v", bodies)
	}
	r := call(t, "GET", s.URL+"/repos/octo/repo/issues/7/comments?per_page=2&page=3", auth, "")
	if l := r.header.Get("Link"); strings.Contains(l, `rel="next"`) || !strings.Contains(l, `rel="prev"`) {
		t.Errorf("last page Link = %q", l)
	}
	r = call(t, "GET", s.URL+"/repos/octo/repo/issues/7/comments?per_page=2&page=9", auth, "")
	if string(r.body) != "[]" {
		t.Errorf("page past the end: %s", r.body)
	}
}

func TestETagAndRateLimitHeaders(t *testing.T) {
	s := newFixture(t)
	url := s.URL + "/repos/octo/repo/issues/7/comments"
	r1 := call(t, "GET", url, auth, "")
	etag := r1.header.Get("ETag")
	if !strings.HasPrefix(etag, `"`) || strings.HasPrefix(etag, "W/") {
		t.Fatalf("ETag %q is not strong", etag)
	}
	rem1 := r1.header.Get("X-RateLimit-Remaining")
	r2 := call(t, "GET", url, auth, "", "If-None-Match", etag)
	if r2.status != 304 || len(r2.body) != 0 {
		t.Fatalf("conditional GET: %d %q", r2.status, r2.body)
	}
	if r2.header.Get("X-RateLimit-Remaining") != rem1 {
		t.Errorf("304 spent rate limit: %s → %s", rem1, r2.header.Get("X-RateLimit-Remaining"))
	}
	if r := call(t, "GET", url, auth, "", "If-None-Match", `"other", W/`+etag); r.status != 304 {
		t.Errorf("list/weak If-None-Match: %d", r.status)
	}
	r3 := call(t, "GET", url, auth, "", "If-None-Match", `"stale"`)
	if r3.status != 200 || atoi(t, r3.header.Get("X-RateLimit-Remaining")) != atoi(t, rem1)-1 {
		t.Errorf("non-matching ETag: %d, remaining %s after %s", r3.status, r3.header.Get("X-RateLimit-Remaining"), rem1)
	}
	if _, err := s.AddComment("octo", "repo", 7, "bob", "", "new"); err != nil {
		t.Fatal(err)
	}
	r4 := call(t, "GET", url, auth, "", "If-None-Match", etag)
	if r4.status != 200 || r4.header.Get("ETag") == etag {
		t.Errorf("after a change: %d etag %s", r4.status, r4.header.Get("ETag"))
	}
	for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Reset", "X-RateLimit-Used"} {
		if r4.header.Get(h) == "" {
			t.Errorf("missing %s", h)
		}
	}
	c := s.Counts()
	if c.Total != 5 || c.NotModified != 2 {
		t.Errorf("counts = %+v", c)
	}
	log := s.Requests()
	if log[1].Status != 304 || log[1].IfNoneMatch != etag || log[1].Method != "GET" || log[1].Path != "/repos/octo/repo/issues/7/comments" {
		t.Errorf("log[1] = %+v", log[1])
	}

	s.SetRateLimit(0, time.Unix(2000000000, 0))
	r := call(t, "GET", s.URL+"/user", auth, "")
	if r.status != 403 || r.header.Get("X-RateLimit-Remaining") != "0" || r.header.Get("X-RateLimit-Reset") != "2000000000" ||
		!strings.Contains(string(r.body), "rate limit") {
		t.Errorf("exhausted: %d %v %s", r.status, r.header, r.body)
	}
}

func TestReactions(t *testing.T) {
	s := newFixture(t)
	id, err := s.AddComment("octo", "repo", 7, DefaultViewer, "NONE", "question")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddReaction(id, "carol", "+1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddReaction(id, "dave", "-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddReaction(id, "dave", "thumbsup"); err == nil {
		t.Error("invalid content accepted")
	}
	if _, err := s.AddReaction(424242, "dave", "+1"); err == nil {
		t.Error("reaction on missing comment accepted")
	}
	url := s.URL + fmt.Sprintf("/repos/octo/repo/issues/comments/%d/reactions", id)
	list := decodeJSON[[]map[string]any](t, call(t, "GET", url, auth, "").body)
	if len(list) != 2 || list[0]["content"] != "+1" || list[0]["user"].(map[string]any)["login"] != "carol" || list[1]["content"] != "-1" {
		t.Errorf("reactions = %v", list)
	}
	if got := decodeJSON[[]map[string]any](t, call(t, "GET", url+"?content=-1", auth, "").body); len(got) != 1 {
		t.Errorf("content filter: %v", got)
	}
	if r := call(t, "GET", s.URL+fmt.Sprintf("/repos/octo/other/issues/comments/%d/reactions", id), auth, ""); r.status != 404 {
		t.Errorf("reactions via wrong repo: %d", r.status)
	}
}

func TestFailures(t *testing.T) {
	s := newFixture(t)
	if err := s.Fail(Failure{Count: 2, PathPrefix: "/repos/", Status: 502}); err != nil {
		t.Fatal(err)
	}
	if err := s.Fail(Failure{Count: 1, Method: "GET", PathPrefix: "/user", Status: 429, Headers: map[string]string{"Retry-After": "2"}}); err != nil {
		t.Fatal(err)
	}
	if r := call(t, "GET", s.URL+"/user", auth, ""); r.status != 429 || r.header.Get("Retry-After") != "2" {
		t.Errorf("429: %d %v", r.status, r.header)
	}
	if r := call(t, "GET", s.URL+"/user", auth, ""); r.status != 200 {
		t.Errorf("after 429: %d", r.status)
	}
	for i := 0; i < 2; i++ {
		if r := call(t, "GET", s.URL+"/repos/octo/repo/issues/7", auth, ""); r.status != 502 || !strings.Contains(string(r.body), "Server Error") {
			t.Errorf("502 #%d: %d %s", i, r.status, r.body)
		}
	}
	if r := call(t, "GET", s.URL+"/repos/octo/repo/issues/7", auth, ""); r.status != 200 {
		t.Errorf("after failures: %d", r.status)
	}
	// Injected failures come before authentication.
	if err := s.Fail(Failure{Count: -1, Status: 403, Headers: map[string]string{"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1"}}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if r := call(t, "GET", s.URL+"/user", "", ""); r.status != 403 || r.header.Get("X-RateLimit-Remaining") != "0" {
			t.Errorf("forever 403 #%d: %d", i, r.status)
		}
	}
	s.ClearFailures()
	if err := s.Fail(Failure{Count: 1, Drop: true}); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", s.URL+"/user", nil)
	if resp, err := (&http.Client{Transport: &http.Transport{}}).Do(req); err == nil {
		resp.Body.Close()
		t.Errorf("dropped connection answered %d", resp.StatusCode)
	}
	if err := s.Fail(Failure{Count: 1, Status: 42}); err == nil {
		t.Error("bad status accepted")
	}
	if err := s.Fail(Failure{Status: 500}); err == nil {
		t.Error("zero count accepted")
	}
	c := s.Counts()
	if c.Dropped != 1 || c.Injected != 7 {
		t.Errorf("counts = %+v", c)
	}
	if last := s.Requests()[len(s.Requests())-1]; !last.Dropped || last.Status != 0 {
		t.Errorf("last log entry = %+v", last)
	}
}

func TestClock(t *testing.T) {
	s := newFixture(t)
	fixed := time.Date(2030, 5, 6, 7, 8, 9, 0, time.UTC)
	s.SetClock(func() time.Time { return fixed })
	id, _ := s.AddComment("octo", "repo", 7, "bob", "", "x")
	id2, _ := s.AddComment("octo", "repo", 7, "bob", "", "y")
	cs := s.Comments("octo", "repo", 7)
	if cs[0].ID != id || cs[1].ID != id2 || !cs[0].CreatedAt.Equal(fixed) || !cs[1].CreatedAt.Equal(fixed) {
		t.Errorf("fixed clock: %+v", cs)
	}
	s.SetEpoch(fixed, time.Minute)
	s.AddComment("octo", "repo", 7, "bob", "", "z")
	s.AddComment("octo", "repo", 7, "bob", "", "w")
	cs = s.Comments("octo", "repo", 7)
	if !cs[2].CreatedAt.Equal(fixed) || !cs[3].CreatedAt.Equal(fixed.Add(time.Minute)) {
		t.Errorf("epoch clock: %v %v", cs[2].CreatedAt, cs[3].CreatedAt)
	}
}

func TestConcurrentWrites(t *testing.T) {
	s := newFixture(t)
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("POST", s.URL+"/repos/octo/repo/issues/7/comments", strings.NewReader(`{"body":"hi"}`))
			req.Header.Set("Authorization", auth)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			_ = s.Counts()
		}()
	}
	wg.Wait()
	cs := s.Comments("octo", "repo", 7)
	if len(cs) != 20 {
		t.Fatalf("%d comments, want 20", len(cs))
	}
	seen := map[time.Time]bool{}
	for _, c := range cs {
		if seen[c.CreatedAt] {
			t.Errorf("duplicate created_at %v", c.CreatedAt)
		}
		seen[c.CreatedAt] = true
	}
}
