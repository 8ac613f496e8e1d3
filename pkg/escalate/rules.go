package escalate

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/teamkit/teamkit/pkg/github"
	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/names"
	"github.com/teamkit/teamkit/pkg/readlimit"
)

// Deciders is the list of GitHub logins whose word counts for an approval
// (and who may also answer any question). Logins compare case-insensitively,
// as GitHub's do.
type Deciders struct {
	logins map[string]bool
	// Configured is false when no list was given at all.
	Configured bool
}

// validLogin is GitHub's login grammar: letters, digits and single hyphens,
// at most 39 characters. "[bot]" logins of apps are allowed too.
var validLogin = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?$`)

// ParseDeciders reads a deciders list: "" is no list; "@FILE" names a file
// with one login per line (blank lines and # comments ignored); anything
// else is comma-separated logins. A leading "@" on a login is dropped. A file
// that cannot be read, or an entry that is not a GitHub login, is an error:
// the caller must then treat the list as absent (fail closed).
func ParseDeciders(spec string, readFile func(string) ([]byte, error)) (Deciders, error) {
	return parseList(spec, readFile, "deciders", "a GitHub login", func(e string) (string, bool) {
		login := strings.TrimPrefix(e, "@")
		return login, validLogin.MatchString(login)
	})
}

// ParseLocalDeciders reads the deciders list `ask answer` checks $USER
// against, with the rules of ParseDeciders, but an entry may also be a
// local user name (the name grammar $USER is checked by: john_doe,
// j.smith), which no GitHub login can be.
func ParseLocalDeciders(spec string, readFile func(string) ([]byte, error)) (Deciders, error) {
	return parseList(spec, readFile, "deciders", "a GitHub login or a user name", func(e string) (string, bool) {
		login := strings.TrimPrefix(e, "@")
		return login, validLogin.MatchString(login) || names.Check("user", login) == nil
	})
}

// slackUser is a Slack user ID: U… (or W… in an Enterprise Grid).
var slackUser = regexp.MustCompile(`^[UW][A-Z0-9]{2,20}$`)

// ParseSlackUsers reads a list of Slack user IDs (TEAMKIT_SLACK_DECIDERS,
// TEAMKIT_SLACK_ANSWERERS) with the rules of ParseDeciders: "" is no list,
// "@FILE" one ID per line, else comma-separated. Names are not IDs: a
// display name can be changed by its owner, an ID cannot.
func ParseSlackUsers(what, spec string, readFile func(string) ([]byte, error)) (Deciders, error) {
	return parseList(spec, readFile, what, "a Slack user ID (U…, from the profile's \"Copy member ID\")", func(e string) (string, bool) {
		return e, slackUser.MatchString(e)
	})
}

// MaxListFile is the largest @FILE list read (1 MiB): one login or Slack ID a
// line, so tens of thousands of people. /dev/zero is refused rather than read
// until memory runs out.
const MaxListFile = 1 << 20

// ReadListFile is the readFile the commands give ParseDeciders and
// ParseSlackUsers: a regular file of at most MaxListFile bytes. A FIFO (or
// any other kind) is refused rather than waited on: a resume pass stuck
// reading one would hold the team's resume lock, and every later pass
// would quietly do nothing.
func ReadListFile(path string) ([]byte, error) { return readlimit.Regular(path, MaxListFile) }

// listFileError is an @FILE list that could not be read. A missing file
// fails every pass (and resume --watch backs off to its ceiling), so it
// says what file was expected and how to make one.
type listFileError struct {
	what, want, path string
	err              error
}

func (e *listFileError) Error() string { return "read " + e.what + " file: " + e.err.Error() }
func (e *listFileError) Unwrap() error { return e.err }

// Hint is for a missing file only; another failure's message says enough.
func (e *listFileError) Hint() string {
	if !errors.Is(e.err, fs.ErrNotExist) {
		return ""
	}
	return fmt.Sprintf("the %s list names the file %s, which does not exist: create it, %s on each line (# starts a comment), or fix the @FILE path; until it is read, no one on this list is heard", e.what, e.path, e.want)
}

func parseList(spec string, readFile func(string) ([]byte, error), what, want string, check func(string) (string, bool)) (Deciders, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return Deciders{}, nil
	}
	var entries []string
	origin := what + " list"
	if path, ok := strings.CutPrefix(spec, "@"); ok {
		if path == "" {
			return Deciders{}, fmt.Errorf("%s list %q: @ must be followed by a file name", what, spec)
		}
		if readFile == nil {
			return Deciders{}, fmt.Errorf("%s list %q: no file can be read here", what, spec)
		}
		data, err := readFile(path)
		if err != nil {
			return Deciders{}, &listFileError{what: what, want: want, path: path, err: err}
		}
		origin = what + " file " + path
		for _, line := range strings.Split(string(data), "\n") {
			if i := strings.IndexByte(line, '#'); i >= 0 {
				line = line[:i]
			}
			if line = strings.TrimSpace(line); line != "" {
				entries = append(entries, line)
			}
		}
	} else {
		for _, e := range strings.Split(spec, ",") {
			if e = strings.TrimSpace(e); e != "" {
				entries = append(entries, e)
			}
		}
	}
	d := Deciders{logins: map[string]bool{}, Configured: true}
	for _, e := range entries {
		id, ok := check(e)
		if !ok {
			return Deciders{}, fmt.Errorf("%s: %q is not %s", origin, e, want)
		}
		d.logins[strings.ToLower(id)] = true
	}
	return d, nil
}

// Union is everyone in d or e; it is configured when either is.
func (d Deciders) Union(e Deciders) Deciders {
	u := Deciders{logins: map[string]bool{}, Configured: d.Configured || e.Configured}
	for k := range d.logins {
		u.logins[k] = true
	}
	for k := range e.logins {
		u.logins[k] = true
	}
	return u
}

// IDs lists the members, sorted (upper-cased: Slack IDs are).
func (d Deciders) IDs() []string {
	var out []string
	for k := range d.logins {
		out = append(out, strings.ToUpper(k))
	}
	sort.Strings(out)
	return out
}

// Has reports whether login is a decider. Case is folded in ASCII only:
// GitHub logins and Slack IDs are ASCII, and Unicode's folding would let
// a login that is not the decider's match it (a Kelvin sign folds to k).
func (d Deciders) Has(login string) bool {
	for i := 0; i < len(login); i++ {
		if login[i] >= utf8.RuneSelf {
			return false
		}
	}
	return d.logins[strings.ToLower(login)]
}

// Len is the number of deciders.
func (d Deciders) Len() int { return len(d.logins) }

// fingerprint identifies the rules an evaluation ran under, so a stored
// ETag ("nothing qualified, as of this content") is only reused under the
// same rules: a decider added later, or another token (whose own comments
// are the ones ignored), makes the next pass read everything.
func fingerprint(kind string, d Deciders, token string) string {
	list := make([]string, 0, len(d.logins))
	for l := range d.logins {
		list = append(list, l)
	}
	sort.Strings(list)
	sum := sha256.Sum256([]byte(fmt.Sprintf("v2|%s|%t|%s|%s", kind, d.Configured, strings.Join(list, ","), token)))
	return hex.EncodeToString(sum[:8])
}

// Input is what FindAnswer judges.
type Input struct {
	Ask mailbox.Ask
	// Comments on the issue; those up to and including the question
	// comment (by id) are skipped.
	Comments []github.Comment
	// Reactions on the question comment (approvals only).
	Reactions []github.Reaction
	Deciders  Deciders
	// Viewer returns the token's own login; called only when there is
	// something to judge.
	Viewer func() (string, error)
	// IssueAuthor returns the issue's author; called only when a reply to a
	// question qualifies by nothing else.
	IssueAuthor func() (string, error)
}

// trusted are the author associations whose replies answer a question.
var trusted = map[string]bool{"OWNER": true, "MEMBER": true, "COLLABORATOR": true}

// event is a comment or a reaction, in the order they happened.
type event struct {
	at       time.Time
	comment  *github.Comment
	reaction *github.Reaction
}

// FindAnswer returns the first (oldest) qualifying answer to the ask, as the
// decision to record; ok is false when nothing qualifies.
//
// A question is answered by the whole body of the first reply from the
// issue's author, an owner, member or collaborator of the repository, or a
// decider. An approval is decided only by a decider: a line "/approve
// [reason]" or "/reject [reason]" in a reply (outside code blocks; a reply
// holding both is ignored), or a +1 / -1 reaction on the question comment.
// Never an answer: the question itself and anything before it, any comment
// carrying a teamkit marker, and anything by the token's own login. An
// approval whose question comment (when among Comments) was edited after it
// was posted is decided by nothing: teamkit never edits it, and anyone with
// write access to the repository can, so a decider may have approved other
// words than the agent's; FindAnswer then returns ErrQuestionEdited.
func FindAnswer(in Input) (dec mailbox.Decision, ok bool, err error) {
	a := in.Ask
	if a.Kind == mailbox.KindApproval {
		for _, c := range in.Comments {
			if c.ID == a.CommentID && edited(c) {
				return mailbox.Decision{}, false, fmt.Errorf("%w (updated %s, posted %s)", ErrQuestionEdited,
					c.UpdatedAt.UTC().Format(time.RFC3339), c.CreatedAt.UTC().Format(time.RFC3339))
			}
		}
	}
	var events []event
	for i := range in.Comments {
		c := &in.Comments[i]
		if c.ID <= a.CommentID || HasMarker(c.Body) || blankAnswer(c.Body) || c.User.Login == "" {
			continue
		}
		events = append(events, event{at: c.CreatedAt, comment: c})
	}
	if a.Kind == mailbox.KindApproval {
		for i := range in.Reactions {
			r := &in.Reactions[i]
			if r.Content == "+1" || r.Content == "-1" {
				events = append(events, event{at: r.CreatedAt, reaction: r})
			}
		}
	}
	if len(events) == 0 {
		return mailbox.Decision{}, false, nil
	}
	sort.SliceStable(events, func(i, j int) bool {
		if !events[i].at.Equal(events[j].at) {
			return events[i].at.Before(events[j].at)
		}
		ci, cj := events[i].comment != nil, events[j].comment != nil
		if ci != cj {
			return ci // a comment before a reaction of the same second
		}
		if ci {
			return events[i].comment.ID < events[j].comment.ID
		}
		return events[i].reaction.ID < events[j].reaction.ID
	})
	viewer, err := in.Viewer()
	if err != nil {
		return mailbox.Decision{}, false, err
	}
	for _, e := range events {
		if e.comment != nil {
			c := e.comment
			if strings.EqualFold(c.User.Login, viewer) {
				continue
			}
			if a.Kind == mailbox.KindApproval {
				// An edited comment never decides: an edit could turn an
				// old reply into a token that outranks a later decision.
				if !in.Deciders.Has(c.User.Login) || edited(*c) {
					continue
				}
				decision, reason, found := ParseDecision(c.Body)
				if !found {
					continue
				}
				return mailbox.Decision{Answer: reason, DecidedBy: c.User.Login, Decision: decision, Source: c.HTMLURL}, true, nil
			}
			eligible := trusted[strings.ToUpper(c.AuthorAssociation)] || in.Deciders.Has(c.User.Login)
			if !eligible {
				author, err := in.IssueAuthor()
				if err != nil {
					return mailbox.Decision{}, false, err
				}
				eligible = author != "" && strings.EqualFold(author, c.User.Login)
			}
			if eligible {
				return mailbox.Decision{Answer: c.Body, DecidedBy: c.User.Login, Decision: mailbox.DecisionAnswered, Source: c.HTMLURL}, true, nil
			}
			continue
		}
		r := e.reaction
		if strings.EqualFold(r.User.Login, viewer) || !in.Deciders.Has(r.User.Login) {
			continue
		}
		decision := mailbox.DecisionApproved
		if r.Content == "-1" {
			decision = mailbox.DecisionRejected
		}
		return mailbox.Decision{DecidedBy: r.User.Login, Decision: decision, Source: a.CommentURL}, true, nil
	}
	return mailbox.Decision{}, false, nil
}

// ErrQuestionEdited: an approval's question comment was edited after teamkit
// posted it, so no reaction or reply on GitHub decides it.
var ErrQuestionEdited = errors.New("the question comment was edited after it was posted, so nothing on GitHub decides this approval")

// edited reports whether comment c was edited after it was posted. GitHub
// stamps a new comment's created_at and updated_at alike, and bumps
// updated_at on an edit (not on a reaction); both are to the second, so an
// edit a second after the post is one second later, and counts. (One in the
// post's own second cannot be told.)
func edited(c github.Comment) bool { return c.UpdatedAt.After(c.CreatedAt) }

var tokenLine = regexp.MustCompile(`^/(approve|reject)(?:[ \t]+(.*?))?[ \t]*$`)

// fenceOpen is a CommonMark code fence: up to three spaces, then three or
// more backticks or tildes.
var fenceOpen = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})")

// ParseDecision finds the "/approve [reason]" or "/reject [reason]" line in
// a comment body. The token must start its line (an indented line is a code
// block in Markdown); the reason is the rest of that line and every line
// after it. Lines in fenced code blocks or HTML comments (invisible on the
// page) don't count, and a body holding both an /approve and a /reject line
// decides nothing.
func ParseDecision(body string) (decision, reason string, ok bool) {
	lines := strings.Split(strings.ReplaceAll(strings.ReplaceAll(body, "\r\n", "\n"), "\r", "\n"), "\n")
	fence := "" // the open code fence, "" outside one
	inComment := false
	// quoted: the previous line was in a block quote, so a non-blank line
	// now is its lazy continuation, shown inside the quote.
	quoted := false
	// inList: a list item came before, and no paragraph at the margin after
	// a blank line has ended the list since. A list item's continuation
	// lines are indented to its content column (two spaces, four, more
	// when nested), so there a ">" after any indentation may open a quote.
	inList, afterBlank := false, false
	first := -1
	for i, line := range lines {
		wasQuoted := quoted
		quoted = false
		if fence != "" {
			// Closed only by the same character, at least as many times.
			if m := fenceOpen.FindStringSubmatch(line); m != nil && m[1][0] == fence[0] && len(m[1]) >= len(fence) &&
				strings.TrimSpace(line[len(m[0]):]) == "" {
				fence = ""
			}
			continue
		}
		blank := strings.TrimSpace(line) == ""
		if indent := len(line) - len(strings.TrimLeft(line, " ")); !blank && indent <= 3 && listMarker.MatchString(line[indent:]) {
			inList = true
		} else if !blank && afterBlank && indent < 2 {
			inList = false
		}
		afterBlank = blank
		// A line in a quote, or one continuing a quoted paragraph; an HTML
		// comment in it hides only the comment, not the quote.
		inQuote := quoteLine(line) || inList && strings.HasPrefix(strings.TrimLeft(line, " \t"), ">") || wasQuoted && !blank
		if inComment {
			inComment = commentOpenAfter(line, true)
			quoted = inQuote
			continue
		}
		if m := fenceOpen.FindStringSubmatch(line); m != nil {
			fence = m[1]
			continue
		}
		if strings.Contains(line, "<!--") {
			inComment = commentOpenAfter(line, false)
			quoted = inQuote
			continue
		}
		if inQuote {
			quoted = true
			continue
		}
		m := tokenLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		d := mailbox.DecisionApproved
		if m[1] == "reject" {
			d = mailbox.DecisionRejected
		}
		if first < 0 {
			first, decision = i, d
			rest := append([]string{m[2]}, lines[i+1:]...)
			reason = strings.TrimSpace(strings.Join(rest, "\n"))
			continue
		}
		if d != decision {
			return "", "", false
		}
	}
	return decision, reason, first >= 0
}

// listMarker is a Markdown list item's marker and the spaces after it.
var listMarker = regexp.MustCompile(`^(?:[-*+]|[0-9]{1,9}[.)])[ \t]+`)

// quoteLine reports whether line opens or continues a block quote: ">"
// after at most three spaces, also inside list items ("- > …", "1. > …"),
// whose quote a following line continues just the same.
func quoteLine(line string) bool {
	for {
		trimmed := strings.TrimLeft(line, " ")
		if len(line)-len(trimmed) > 3 {
			return false
		}
		if strings.HasPrefix(trimmed, ">") {
			return true
		}
		m := listMarker.FindString(trimmed)
		if m == "" {
			return false
		}
		line = trimmed[len(m):]
	}
}

// commentOpenAfter reports whether an HTML comment is still open at the end
// of line, given whether one was open at its start: a line may close one
// comment and open another ("--> text <!--").
func commentOpenAfter(line string, open bool) bool {
	for {
		if open {
			i := strings.Index(line, "-->")
			if i < 0 {
				return true
			}
			line, open = line[i+3:], false
			continue
		}
		i := strings.Index(line, "<!--")
		if i < 0 {
			return false
		}
		line, open = line[i+4:], true
	}
}
