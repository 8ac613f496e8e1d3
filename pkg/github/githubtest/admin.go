package githubtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The admin API lets a process that cannot call Go methods (an end-to-end
// harness, a shell script with curl) drive the fake. Every endpoint takes and
// returns JSON; errors are 4xx with {"error": "..."}. Admin requests need no
// token and are not written to the request log.
//
//	POST   /_fake/reset                     restore the initial state
//	POST   /_fake/issues                    {"issue":"o/r#N"} or {"owner","repo","number"}, "author", ["title"], ["state"]
//	                                          → {"issue":"o/r#N"}
//	POST   /_fake/comments                  {"issue" | "owner","repo","number", "login", "author_association", "body"}
//	                                          → {"id":N}
//	GET    /_fake/comments[?issue=o/r%23N]  → [Comment] (every comment without issue=)
//	PATCH  /_fake/comments/{id}             {"body"} → {"id":N}  (bumps updated_at)
//	POST   /_fake/reactions                 {"comment_id", "login", "content"} → {"id":N}
//	POST   /_fake/failures                  Failure: {"count", ["path_prefix"], ["method"], "status", ["headers"], ["message"], ["drop"]}
//	DELETE /_fake/failures                  clear queued failures
//	GET    /_fake/auth                      → {"tokens":[...], "viewer", "viewer_association"}
//	POST   /_fake/auth                      same shape; omitted fields are left as they are
//	GET    /_fake/ratelimit                 → {"limit", "remaining", "reset"} (reset: unix seconds)
//	POST   /_fake/ratelimit                 {"remaining", ["reset"]}
//	POST   /_fake/clock                     {"now":"RFC 3339", ["step":"1s"]}: stepping clock for writes
//	GET    /_fake/requests                  → [Request]
//	DELETE /_fake/requests                  clear the request log
//	GET    /_fake/counts                    → Counts

// IssueSpec is the JSON body of POST /_fake/issues.
type IssueSpec struct {
	Issue  string `json:"issue,omitempty"`
	Owner  string `json:"owner,omitempty"`
	Repo   string `json:"repo,omitempty"`
	Number int    `json:"number,omitempty"`
	Author string `json:"author"`
	Title  string `json:"title,omitempty"`
	State  string `json:"state,omitempty"`
}

// CommentSpec is the JSON body of POST /_fake/comments.
type CommentSpec struct {
	Issue             string `json:"issue,omitempty"`
	Owner             string `json:"owner,omitempty"`
	Repo              string `json:"repo,omitempty"`
	Number            int    `json:"number,omitempty"`
	Login             string `json:"login"`
	AuthorAssociation string `json:"author_association"`
	Body              string `json:"body"`
}

// ReactionSpec is the JSON body of POST /_fake/reactions.
type ReactionSpec struct {
	CommentID int64  `json:"comment_id"`
	Login     string `json:"login"`
	Content   string `json:"content"`
}

// AuthSpec is the JSON of /_fake/auth.
type AuthSpec struct {
	Tokens            []string `json:"tokens,omitempty"`
	Viewer            string   `json:"viewer,omitempty"`
	ViewerAssociation string   `json:"viewer_association,omitempty"`
}

// RateLimitSpec is the JSON of /_fake/ratelimit.
type RateLimitSpec struct {
	Limit     int   `json:"limit,omitempty"`
	Remaining *int  `json:"remaining"`
	Reset     int64 `json:"reset,omitempty"`
}

// ClockSpec is the JSON body of POST /_fake/clock.
type ClockSpec struct {
	Now  string `json:"now"`
	Step string `json:"step,omitempty"`
}

func (s *Server) serveAdmin(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/_fake/"), "/")
	route := r.Method + " " + path
	if id, ok := strings.CutPrefix(path, "comments/"); ok && r.Method == http.MethodPatch {
		s.adminEditComment(w, r, id)
		return
	}
	switch route {
	case "POST reset":
		s.Reset()
		writeJSON(w, http.StatusOK, map[string]any{})
	case "POST issues":
		var in IssueSpec
		if !readJSON(w, r, &in) {
			return
		}
		k, err := issueFromSpec(in.Issue, in.Owner, in.Repo, in.Number)
		if err == nil {
			err = s.addIssue(k.owner, k.repo, k.number, in.Author, in.Title, in.State)
		}
		if err != nil {
			adminError(w, http.StatusBadRequest, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"issue": k.String()})
	case "POST comments":
		var in CommentSpec
		if !readJSON(w, r, &in) {
			return
		}
		k, err := issueFromSpec(in.Issue, in.Owner, in.Repo, in.Number)
		var id int64
		if err == nil {
			id, err = s.AddComment(k.owner, k.repo, k.number, in.Login, in.AuthorAssociation, in.Body)
		}
		if err != nil {
			adminError(w, http.StatusBadRequest, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]int64{"id": id})
	case "GET comments":
		if v := r.URL.Query().Get("issue"); v != "" {
			k, err := issueFromSpec(v, "", "", 0)
			if err != nil {
				adminError(w, http.StatusBadRequest, err)
				return
			}
			writeJSON(w, http.StatusOK, nonNil(s.Comments(k.owner, k.repo, k.number)))
			return
		}
		writeJSON(w, http.StatusOK, nonNil(s.AllComments()))
	case "POST reactions":
		var in ReactionSpec
		if !readJSON(w, r, &in) {
			return
		}
		id, err := s.AddReaction(in.CommentID, in.Login, in.Content)
		if err != nil {
			adminError(w, http.StatusBadRequest, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]int64{"id": id})
	case "POST failures":
		var in Failure
		if !readJSON(w, r, &in) {
			return
		}
		if err := s.Fail(in); err != nil {
			adminError(w, http.StatusBadRequest, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{})
	case "DELETE failures":
		s.ClearFailures()
		writeJSON(w, http.StatusOK, map[string]any{})
	case "GET auth":
		writeJSON(w, http.StatusOK, s.authSpec())
	case "POST auth":
		var in AuthSpec
		if !readJSON(w, r, &in) {
			return
		}
		if in.Tokens != nil {
			s.SetTokens(in.Tokens...)
		}
		if in.Viewer != "" {
			s.SetViewer(in.Viewer)
		}
		if in.ViewerAssociation != "" {
			s.SetViewerAssociation(in.ViewerAssociation)
		}
		writeJSON(w, http.StatusOK, s.authSpec())
	case "GET ratelimit":
		s.mu.Lock()
		rem := s.remaining
		out := RateLimitSpec{Limit: RateLimit, Remaining: &rem, Reset: s.reset.Unix()}
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, out)
	case "POST ratelimit":
		var in RateLimitSpec
		if !readJSON(w, r, &in) {
			return
		}
		if in.Remaining == nil {
			adminError(w, http.StatusBadRequest, fmt.Errorf("ratelimit: remaining is required"))
			return
		}
		var reset time.Time
		if in.Reset > 0 {
			reset = time.Unix(in.Reset, 0)
		}
		s.SetRateLimit(*in.Remaining, reset)
		writeJSON(w, http.StatusOK, map[string]any{})
	case "POST clock":
		var in ClockSpec
		if !readJSON(w, r, &in) {
			return
		}
		now, err := time.Parse(time.RFC3339, in.Now)
		if err != nil {
			adminError(w, http.StatusBadRequest, fmt.Errorf("clock: now: %w", err))
			return
		}
		step := time.Second
		if in.Step != "" {
			if step, err = time.ParseDuration(in.Step); err != nil || step < 0 {
				adminError(w, http.StatusBadRequest, fmt.Errorf("clock: step %q is not a non-negative duration", in.Step))
				return
			}
		}
		s.SetEpoch(now, step)
		writeJSON(w, http.StatusOK, map[string]any{})
	case "GET requests":
		writeJSON(w, http.StatusOK, nonNil(s.Requests()))
	case "DELETE requests":
		s.ClearRequests()
		writeJSON(w, http.StatusOK, map[string]any{})
	case "GET counts":
		writeJSON(w, http.StatusOK, s.Counts())
	default:
		adminError(w, http.StatusNotFound, fmt.Errorf("no admin endpoint %s /_fake/%s", r.Method, path))
	}
}

func (s *Server) adminEditComment(w http.ResponseWriter, r *http.Request, rawID string) {
	id, err := strconv.ParseInt(rawID, 10, 64)
	if err != nil {
		adminError(w, http.StatusBadRequest, fmt.Errorf("edit comment: bad id %q", rawID))
		return
	}
	var in struct {
		Body string `json:"body"`
	}
	if !readJSON(w, r, &in) {
		return
	}
	if err := s.EditComment(id, in.Body); err != nil {
		adminError(w, http.StatusNotFound, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]int64{"id": id})
}

func (s *Server) authSpec() AuthSpec {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := AuthSpec{Tokens: []string{}, Viewer: s.viewer, ViewerAssociation: s.viewerAssoc}
	for t := range s.tokens {
		out.Tokens = append(out.Tokens, t)
	}
	sort.Strings(out.Tokens)
	return out
}

// issueFromSpec takes either "owner/repo#N" or the three parts.
func issueFromSpec(ref, owner, repo string, number int) (issueKey, error) {
	if ref != "" {
		repoPart, num, ok := strings.Cut(ref, "#")
		o, rp, ok2 := strings.Cut(repoPart, "/")
		n, err := strconv.Atoi(num)
		if !ok || !ok2 || err != nil || o == "" || rp == "" || n <= 0 || strings.Contains(rp, "/") {
			return issueKey{}, fmt.Errorf("issue %q: want owner/repo#N", ref)
		}
		return issueKey{o, rp, n}, nil
	}
	if owner == "" || repo == "" || number <= 0 {
		return issueKey{}, fmt.Errorf("issue: give \"issue\":\"owner/repo#N\" or owner, repo and a positive number")
	}
	return issueKey{owner, repo, number}, nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		adminError(w, http.StatusBadRequest, fmt.Errorf("%s %s: bad JSON body: %w", r.Method, r.URL.Path, err))
		return false
	}
	return true
}

func adminError(w http.ResponseWriter, status int, err error) {
	writeJSON(w, status, map[string]string{"error": err.Error()})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
