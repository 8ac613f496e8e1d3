//go:build linux

package teamkit_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/teamkit/teamkit/internal/githubtest"
	"github.com/teamkit/teamkit/pkg/escalate"
	"github.com/teamkit/teamkit/pkg/fence"
	"github.com/teamkit/teamkit/pkg/mailbox"
)

// Keys of the per-script values Setup stores.
type (
	fakeKey struct{}
	varsKey struct{}
)

// waitLimit is how long the polling commands wait before failing a script:
// generous, since a loaded machine can be slow, and only reached on failure.
const waitLimit = 90 * time.Second

const pollEvery = 50 * time.Millisecond

func fakeOf(ts *testscript.TestScript) *githubtest.Server {
	return ts.Value(fakeKey{}).(*githubtest.Server)
}

var issueRef = regexp.MustCompile(`^([^/]+)/([^#]+)#([0-9]+)$`)

func parseRef(ts *testscript.TestScript, s string) (string, string, int) {
	m := issueRef.FindStringSubmatch(s)
	if m == nil {
		ts.Fatalf("ghfake: %q is not OWNER/REPO#N", s)
	}
	n, _ := strconv.Atoi(m[3])
	return m[1], m[2], n
}

// ghFake drives the script's fake GitHub API:
//
//	ghfake issue OWNER/REPO#N AUTHOR
//	ghfake comment OWNER/REPO#N LOGIN ASSOCIATION BODY|@FILE   (prints id=N)
//	ghfake react OWNER/REPO#N LOGIN CONTENT   (on the newest teamkit question comment)
//	ghfake fail STATUS COUNT [PATH_PREFIX]    (COUNT -1: until heal)
//	ghfake drop COUNT                         (close connections without a response)
//	ghfake heal                               (clear injected failures)
//	ghfake comments OWNER/REPO#N              (prints each comment, then count=N)
//	ghfake requests                           (prints METHOD PATH STATUS per request)
//	ghfake waitrequests COUNT STATUS          (until COUNT requests got STATUS)
//	ghfake clearlog
func ghFake(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: ghfake issue|comment|react|fail|drop|ratelimit|heal|comments|requests|waitrequests|clearlog ...")
	}
	f := fakeOf(ts)
	want := func(n int) {
		if len(args) != n {
			ts.Fatalf("ghfake %s: want %d arguments, got %d", args[0], n-1, len(args)-1)
		}
	}
	switch args[0] {
	case "token":
		// The tokens the stand-in accepts (a canary, say).
		f.SetTokens(args[1:]...)
	case "issue":
		want(3)
		o, r, n := parseRef(ts, args[1])
		ts.Check(f.AddIssue(o, r, n, args[2]))
	case "comment":
		want(5)
		o, r, n := parseRef(ts, args[1])
		body := args[4]
		if file, ok := strings.CutPrefix(body, "@"); ok {
			body = ts.ReadFile(file)
		}
		id, err := f.AddComment(o, r, n, args[2], args[3], body)
		ts.Check(err)
		fmt.Fprintf(ts.Stdout(), "id=%d\n", id)
	case "react":
		want(4)
		o, r, n := parseRef(ts, args[1])
		var qid int64
		for _, c := range f.Comments(o, r, n) {
			if strings.Contains(c.Body, escalate.MarkerPrefix) {
				qid = c.ID
			}
		}
		if qid == 0 {
			ts.Fatalf("ghfake react: no teamkit question on %s", args[1])
		}
		_, err := f.AddReaction(qid, args[2], args[3])
		ts.Check(err)
	case "fail":
		if len(args) != 3 && len(args) != 4 {
			ts.Fatalf("usage: ghfake fail STATUS COUNT [PATH_PREFIX]")
		}
		status, err1 := strconv.Atoi(args[1])
		count, err2 := strconv.Atoi(args[2])
		if err1 != nil || err2 != nil {
			ts.Fatalf("ghfake fail: STATUS and COUNT are numbers")
		}
		fl := githubtest.Failure{Status: status, Count: count}
		if len(args) == 4 {
			fl.PathPrefix = args[3]
		}
		ts.Check(f.Fail(fl))
	case "drop":
		want(2)
		count, err := strconv.Atoi(args[1])
		ts.Check(err)
		ts.Check(f.Fail(githubtest.Failure{Drop: true, Count: count}))
	case "ratelimit":
		// ghfake ratelimit REMAINING RESET_IN: the primary rate limit, with
		// its reset that far in the future.
		want(3)
		remaining, err := strconv.Atoi(args[1])
		ts.Check(err)
		in, err := time.ParseDuration(args[2])
		ts.Check(err)
		f.SetRateLimit(remaining, time.Now().Add(in))
	case "heal":
		want(1)
		f.ClearFailures()
	case "comments":
		want(2)
		o, r, n := parseRef(ts, args[1])
		cs := f.Comments(o, r, n)
		for _, c := range cs {
			fmt.Fprintf(ts.Stdout(), "--- id=%d login=%s association=%s\n%s\n", c.ID, c.Login, c.AuthorAssociation, c.Body)
		}
		fmt.Fprintf(ts.Stdout(), "count=%d\n", len(cs))
	case "requests":
		want(1)
		for _, r := range f.Requests() {
			fmt.Fprintf(ts.Stdout(), "%s %s %d\n", r.Method, r.Path, r.Status)
		}
	case "waitrequests":
		want(3)
		count, err1 := strconv.Atoi(args[1])
		status, err2 := strconv.Atoi(args[2])
		if err1 != nil || err2 != nil {
			ts.Fatalf("ghfake waitrequests: COUNT and STATUS are numbers")
		}
		deadline := time.Now().Add(waitLimit)
		for {
			n := 0
			for _, r := range f.Requests() {
				if r.Status == status {
					n++
				}
			}
			if n >= count {
				break
			}
			if time.Now().After(deadline) {
				ts.Fatalf("ghfake waitrequests: %d requests got %d, never %d", n, status, count)
			}
			time.Sleep(pollEvery)
		}
	case "clearlog":
		want(1)
		f.ClearRequests()
	default:
		ts.Fatalf("ghfake: unknown verb %q", args[0])
	}
}

// waitFor runs "waitfor PATTERN cmd args…": cmd again and again until its
// stdout matches PATTERN (its exit status does not matter).
func waitFor(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: waitfor PATTERN command [args...]")
	}
	re, err := regexp.Compile("(?m)" + args[0]) // as stdout does
	ts.Check(err)
	deadline := time.Now().Add(waitLimit)
	for {
		ts.Exec(args[1], args[2:]...)
		if re.MatchString(ts.ReadFile("stdout")) {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("waitfor: %s never printed a match for %q", args[1], args[0])
		}
		time.Sleep(pollEvery)
	}
}

// waitAgent runs "waitagent TEAM NAME STATE": wait until the agent's latest
// launch is in STATE (for exited: with its exit code recorded).
func waitAgent(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: waitagent TEAM NAME STATE")
	}
	ctx := context.Background()
	db, err := mailbox.Open(ctx, ts.Getenv("TEAMKIT_DB"), mailbox.Options{})
	ts.Check(err)
	defer db.Close()
	deadline := time.Now().Add(waitLimit)
	var last mailbox.Agent
	for {
		a, err := db.Agent(ctx, args[0], args[1])
		if err == nil {
			last = a
			if a.State == args[2] && (a.State != mailbox.StateExited || a.ExitCode != nil) {
				return
			}
		} else if !errors.Is(err, mailbox.ErrNotFound) {
			ts.Fatalf("waitagent: %v", err)
		}
		if time.Now().After(deadline) {
			ts.Fatalf("waitagent: %s/%s is %q (run %s), never %q", args[0], args[1], last.State, last.Run, args[2])
		}
		time.Sleep(pollEvery)
	}
}

// waitClaim runs "waitclaim TEAM NAME park|wake": wait until a resume pass
// has claimed the agent's park (its claim recorded) or its wake (woke_through
// advanced past 0), neither of which a command prints.
func waitClaim(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 || args[2] != "park" && args[2] != "wake" {
		ts.Fatalf("usage: waitclaim TEAM NAME park|wake")
	}
	dbURL := ts.Getenv("TEAMKIT_DB")
	db, err := openScriptDB(dbURL)
	ts.Check(err)
	defer db.Close()
	// The names are the script's own: quoted as literals, the one
	// statement serves both backends' placeholders.
	q := "SELECT park_claim <> '' FROM agents WHERE team = '" + args[0] + "' AND name = '" + args[1] + "'"
	if args[2] == "wake" {
		q = "SELECT woke_through > 0 FROM agents WHERE team = '" + args[0] + "' AND name = '" + args[1] + "'"
	}
	for deadline := time.Now().Add(waitLimit); ; time.Sleep(pollEvery) {
		var claimed bool
		if err := db.QueryRow(q).Scan(&claimed); err == nil && claimed {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("waitclaim: %s/%s's %s was never claimed", args[0], args[1], args[2])
		}
	}
}

// extraVars are variables a script may set after Setup that parallel
// commands must see.
var extraVars = []string{"TEAMKIT_TYPES", "TEAMKIT_DECIDERS", "TEAMKIT_TEST_CRASH", "TEAMKIT_SLACK_WEBHOOK", "GH_TOKEN",
	"TEAMKIT_SLACK_BOT_TOKEN", "TEAMKIT_SLACK_APP_TOKEN", "TEAMKIT_SLACK_CHANNEL", "TEAMKIT_SLACK_DECIDERS", "TEAMKIT_SLACK_ANSWERERS"}

// parallel runs "parallel N cmd args…": N copies of cmd at once, as separate
// processes with the script's environment. It prints a summary:
// "exit0=A exit1=B other=C" and "resumed=R" (stdout lines starting
// "resumed "), "unparked=U" (lines starting "unparked ") and "skipped=S" (stderr lines saying another resume ran).
// With PARALLEL_HOSTS=N set in the script, the copies are spread over N
// hosts (see below).
func parallel(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: parallel N command [args...]")
	}
	n, err := strconv.Atoi(args[0])
	if err != nil || n <= 0 {
		ts.Fatalf("parallel: bad count %q", args[0])
	}
	env := scriptEnviron(ts)
	bin := scriptBin(ts, args[1])
	hosts, _ := strconv.Atoi(ts.Getenv("PARALLEL_HOSTS"))
	type result struct {
		code           int
		stdout, stderr string
	}
	results := make([]result, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(bin, args[2:]...)
			cmd.Args[0] = args[1]
			cmd.Env = env
			if hosts > 1 {
				// Copy i runs on "host<i mod N>": its own host id and
				// state directory, as on another machine.
				h := fmt.Sprintf("host%d", i%hosts)
				cmd.Env = append(append([]string(nil), env...),
					"TEAMKIT_HOST="+h, "XDG_STATE_HOME="+filepath.Join(ts.Getenv("WORK"), h, "state"))
			}
			cmd.Dir = ts.Getenv("WORK")
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			<-start
			err := cmd.Run()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				code = -2
			}
			results[i] = result{code, out.String(), errb.String()}
		}()
	}
	close(start)
	wg.Wait()
	var ok, failed, other, resumed, unparked, skipped int
	for _, r := range results {
		switch r.code {
		case 0:
			ok++
		case 1:
			failed++
			ts.Logf("parallel: a run failed: %s", r.stderr)
		default:
			other++
			ts.Logf("parallel: a run exited %d: %s", r.code, r.stderr)
		}
		for _, line := range strings.Split(r.stdout, "\n") {
			if strings.HasPrefix(line, "resumed ") {
				resumed++
			}
			if strings.HasPrefix(line, "unparked ") {
				unparked++
			}
		}
		if strings.Contains(r.stderr, "another resume of team") {
			skipped++
		}
	}
	fmt.Fprintf(ts.Stdout(), "exit0=%d exit1=%d other=%d\nresumed=%d\nunparked=%d\nskipped=%d\n", ok, failed, other, resumed, unparked, skipped)
}

// fenced runs "fenced FILE TEXT": TEXT occurs in FILE exactly once, and
// between the BEGIN and END markers of one fence (same nonce).
func fenced(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: fenced FILE TEXT")
	}
	data := ts.ReadFile(args[0])
	if c := strings.Count(data, args[1]); c != 1 {
		ts.Fatalf("fenced: %q occurs %d times in %s, want exactly once", args[1], c, args[0])
	}
	at := strings.Index(data, args[1])
	begin := regexp.MustCompile(regexp.QuoteMeta(fence.MarkerPrefix) + ` BEGIN nonce=([0-9a-f]{32}) `)
	var open string
	openAt := -1
	for _, m := range begin.FindAllStringSubmatchIndex(data, -1) {
		if m[0] < at {
			open, openAt = data[m[2]:m[3]], m[0]
		}
	}
	if openAt < 0 {
		ts.Fatalf("fenced: %q is not inside a fence in %s", args[1], args[0])
	}
	end := fence.MarkerPrefix + " END nonce=" + open + ">>>"
	endAt := strings.Index(data[openAt:], end)
	if endAt < 0 || openAt+endAt < at {
		ts.Fatalf("fenced: %q is not between the markers of fence %s in %s", args[1], open, args[0])
	}
}
