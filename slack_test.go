//go:build linux

package teamkit_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/teamkit/teamkit/internal/slacktest"
)

type slackKey struct{}

// slackState is a script's Slack stand-in and the envelopes it injected.
type slackState struct {
	srv       *slacktest.Server
	envelopes []string
}

// setupSlack gives each script a Slack stand-in: TEAMKIT_SLACK_API_URL
// points at it, and $SLACKFAKE_BOT_TOKEN / $SLACKFAKE_APP_TOKEN are the
// tokens it accepts. No script talks to Slack unless it sets the
// TEAMKIT_SLACK_*_TOKEN variables itself.
func setupSlack(e *testscript.Env) {
	srv := slacktest.NewServer()
	e.Defer(srv.Close)
	e.Values[slackKey{}] = &slackState{srv: srv}
	e.Setenv("TEAMKIT_SLACK_API_URL", srv.APIURL())
	e.Setenv("SLACKFAKE_BOT_TOKEN", slacktest.BotToken)
	e.Setenv("SLACKFAKE_APP_TOKEN", slacktest.AppToken)
}

// slackFake drives the script's Slack stand-in. People act on the newest
// question teamkit posted; each action changes what the Web API reads and
// delivers its event:
//
//	slackfake react USER REACTION        USER adds REACTION to the question
//	slackfake unreact USER REACTION      USER removes it
//	slackfake reply USER TEXT|@FILE      USER replies in the question's thread
//	slackfake edit USER TEXT             USER edits their newest reply there
//	slackfake delete USER                USER deletes their newest reply there
//	slackfake bot TEXT                   teamkit's own bot replying in the thread
//	slackfake forge USER REACTION        a reaction_added event with no reaction behind it
//	slackfake limit METHOD N             a budget of N calls a minute for METHOD (0: none)
//	slackfake join USER                  a channel_join message
//	slackfake raw FRAME                  a frame as it is (waits for a connection)
//	slackfake disconnect                 Slack's disconnect envelope
//	slackfake dropack                    the next ack kills the socket instead
//	slackfake waitconn N                 until N connections got their hello
//	slackfake waitack [ENVELOPE_ID]      until every injected envelope (or that one) is acked
//	slackfake waitcall METHOD [ERROR]    until METHOD was called (and answered ERROR)
//	slackfake waitcalls METHOD N         until METHOD was called N times
//	slackfake fail METHOD STATUS COUNT [RETRY_AFTER|after]   (COUNT -1: until heal)
//	slackfake error METHOD CODE COUNT    HTTP 200 {"ok":false,"error":CODE}
//	slackfake heal
//	slackfake messages                   each posted message, then count=N
//	slackfake requests                   METHOD STATUS [ERROR] per Web API call
//	slackfake acks                       each ack, then count=N
//	slackfake notoken DIR                no file under DIR holds a stand-in token
func slackFake(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: slackfake react|unreact|reply|edit|delete|bot|forge|join|raw|disconnect|dropack|waitconn|waitack|waitcall|waitcalls|limit|fail|error|heal|messages|requests|acks|notoken ...")
	}
	st := ts.Value(slackKey{}).(*slackState)
	s := st.srv
	want := func(n int) {
		if len(args) != n {
			ts.Fatalf("slackfake %s: want %d arguments, got %d", args[0], n-1, len(args)-1)
		}
	}
	question := func() slacktest.Message {
		q, ok := s.LastQuestion()
		if !ok {
			ts.Fatalf("slackfake %s: teamkit posted no question", args[0])
		}
		return q
	}
	delivered := func(id string) {
		if id == "" {
			ts.Fatalf("slackfake %s: that changes nothing in Slack, so Slack sends no event", args[0])
		}
		st.envelopes = append(st.envelopes, id)
		fmt.Fprintf(ts.Stdout(), "envelope=%s\n", id)
	}
	inject := func(ev map[string]any) { delivered(s.Inject(ev)) }
	lastReply := func(user string) slacktest.Message {
		q := question()
		m, ok := s.LastReply(user, q.Channel, q.TS)
		if !ok {
			ts.Fatalf("slackfake %s: %s has no reply in the question's thread", args[0], user)
		}
		return m
	}
	wait := func(what string, cond func(v slacktest.View) bool) {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		if err := s.Wait(ctx, cond); err != nil {
			ts.Fatalf("slackfake: never %s", what)
		}
	}
	switch args[0] {
	case "react":
		want(3)
		q := question()
		delivered(s.React(args[1], args[2], q.Channel, q.TS))
	case "unreact":
		want(3)
		q := question()
		delivered(s.Unreact(args[1], args[2], q.Channel, q.TS))
	case "reply":
		want(3)
		text := args[2]
		if file, ok := strings.CutPrefix(text, "@"); ok {
			text = ts.ReadFile(file)
		}
		q := question()
		_, env := s.PostReply(args[1], text, q.Channel, q.TS)
		delivered(env)
	case "edit":
		want(3)
		m := lastReply(args[1])
		delivered(s.EditReply(m.Channel, m.TS, args[2]))
	case "delete":
		want(2)
		m := lastReply(args[1])
		delivered(s.DeleteReply(m.Channel, m.TS))
	case "bot":
		want(2)
		q := question()
		_, env := s.PostBotReply(args[1], q.Channel, q.TS)
		delivered(env)
	case "forge":
		want(3)
		q := question()
		inject(slacktest.Reaction(args[1], args[2], q.Channel, q.TS, s.NewTS()))
	case "limit":
		want(3)
		n, err := strconv.Atoi(args[2])
		ts.Check(err)
		s.Limit(args[1], n, time.Minute)
	case "join":
		want(2)
		inject(slacktest.Join(args[1], slacktest.Channel, s.NewTS()))
	case "raw":
		want(2)
		wait("connected", func(v slacktest.View) bool { return v.Connected() })
		if !s.Raw(args[1]) {
			ts.Fatalf("slackfake raw: the connection closed")
		}
	case "disconnect":
		want(1)
		wait("connected", func(v slacktest.View) bool { return v.Connected() })
		if !s.Disconnect() {
			ts.Fatalf("slackfake disconnect: the connection closed")
		}
	case "dropack":
		want(1)
		s.DropNextAck()
	case "waitconn":
		want(2)
		n, err := strconv.Atoi(args[1])
		ts.Check(err)
		wait(fmt.Sprintf("saw %d connections", n), func(v slacktest.View) bool { return v.Connections() >= n && v.Connected() })
	case "waitack":
		if len(args) == 2 {
			wait("got an ack for "+args[1], func(v slacktest.View) bool { return v.AckedAny(args[1]) })
			break
		}
		want(1)
		ids := append([]string(nil), st.envelopes...)
		wait(fmt.Sprintf("got acks for %v", ids), func(v slacktest.View) bool {
			for _, id := range ids {
				if !v.Acked(id) {
					return false
				}
			}
			return true
		})
	case "waitcall":
		if len(args) != 2 && len(args) != 3 {
			ts.Fatalf("usage: slackfake waitcall METHOD [ERROR]")
		}
		wait("saw a call of "+strings.Join(args[1:], " "), func(v slacktest.View) bool {
			for _, r := range v.Requests() {
				if r.Method == args[1] && (len(args) == 2 || r.Error == args[2]) {
					return true
				}
			}
			return false
		})
	case "waitcalls":
		want(3)
		n, err := strconv.Atoi(args[2])
		ts.Check(err)
		wait(fmt.Sprintf("saw %d calls of %s", n, args[1]), func(v slacktest.View) bool {
			got := 0
			for _, r := range v.Requests() {
				if r.Method == args[1] {
					got++
				}
			}
			return got >= n
		})
	case "fail":
		if len(args) != 4 && len(args) != 5 {
			ts.Fatalf("usage: slackfake fail METHOD STATUS COUNT [RETRY_AFTER|after]")
		}
		status, err1 := strconv.Atoi(args[2])
		count, err2 := strconv.Atoi(args[3])
		if err1 != nil || err2 != nil {
			ts.Fatalf("slackfake fail: STATUS and COUNT are numbers")
		}
		f := slacktest.Failure{Method: args[1], Status: status, Count: count}
		if len(args) == 5 {
			if args[4] == "after" {
				f.AfterCall = true
			} else if f.RetryAfter, err1 = strconv.Atoi(args[4]); err1 != nil {
				ts.Fatalf("slackfake fail: RETRY_AFTER is seconds, or the word after")
			}
		}
		s.Fail(f)
	case "error":
		want(4)
		count, err := strconv.Atoi(args[3])
		ts.Check(err)
		s.Fail(slacktest.Failure{Method: args[1], Error: args[2], Count: count})
	case "heal":
		want(1)
		s.Heal()
	case "messages":
		want(1)
		ms := s.Messages()
		for _, m := range ms {
			fmt.Fprintf(ts.Stdout(), "--- channel=%s ts=%s bot=%s\n%s\n", m.Channel, m.TS, m.BotID, m.Text)
		}
		fmt.Fprintf(ts.Stdout(), "count=%d\n", len(ms))
	case "requests":
		want(1)
		for _, r := range s.Requests() {
			fmt.Fprintf(ts.Stdout(), "%s %d %s\n", r.Method, r.Status, r.Error)
		}
	case "acks":
		want(1)
		acks := s.Acks()
		for _, a := range acks {
			fmt.Fprintf(ts.Stdout(), "ack %s\n", a)
		}
		fmt.Fprintf(ts.Stdout(), "count=%d\n", len(acks))
	case "notoken":
		want(2)
		root := ts.MkAbs(args[1])
		tokens := []string{slacktest.BotToken, slacktest.AppToken}
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !d.Type().IsRegular() {
				return err
			}
			data, err := os.ReadFile(path)
			if errors.Is(err, fs.ErrNotExist) {
				// Gone since the walk listed it: SQLite removes the
				// mailbox's -shm and -wal files when its last user closes.
				return nil
			}
			if err != nil {
				return err
			}
			for _, tok := range tokens {
				if strings.Contains(string(data), tok) {
					ts.Fatalf("slackfake notoken: %s holds a Slack token", path)
				}
			}
			return nil
		})
		ts.Check(err)
	default:
		ts.Fatalf("slackfake: unknown verb %q", args[0])
	}
}
