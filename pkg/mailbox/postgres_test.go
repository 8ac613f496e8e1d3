package mailbox_test

// What is particular to the PostgreSQL backend: its migrations, its claim,
// its locks and that its password never shows. The behaviour tests in
// mailbox_test.go run on it as on SQLite.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/teamkit/teamkit/internal/pgtest"
	"github.com/teamkit/teamkit/pkg/mailbox"
)

func TestRebind(t *testing.T) {
	for in, want := range map[string]string{
		`SELECT a FROM t WHERE x = ? AND y = ?`:                                     `SELECT a FROM t WHERE x = $1 AND y = $2`,
		`SELECT '?' , "q?" FROM t WHERE x = ? -- why?` + "\n" + `AND ?`:             `SELECT '?' , "q?" FROM t WHERE x = $1 -- why?` + "\n" + `AND $2`,
		`/* ? */ UPDATE messages INDEXED BY messages_unread_by_recipient SET a = ?`: `/* ? */ UPDATE messages SET a = $1`,
		`CREATE FUNCTION f() AS $$ SELECT '?' $$; SELECT ?`:                         `CREATE FUNCTION f() AS $$ SELECT '?' $$; SELECT $1`,
		`SELECT 1`: `SELECT 1`,
	} {
		if got := mailbox.Rebind(in); got != want {
			t.Errorf("rebind(%q) =\n %q, want\n %q", in, got, want)
		}
	}
}

// Every SQLite migration has its PostgreSQL twin of the same name, so the
// two schemas have the same versions.
func TestMigrationTwins(t *testing.T) {
	names := func(dir string) []string {
		var out []string
		files, err := fs.Glob(os.DirFS(dir), "*.sql")
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			out = append(out, filepath.Base(f))
		}
		return out
	}
	lite, pg := names("migrations"), names("migrations/postgres")
	if strings.Join(lite, " ") != strings.Join(pg, " ") {
		t.Fatalf("migrations/ has %v but migrations/postgres/ has %v: add the PostgreSQL twin of each", lite, pg)
	}
}

// Hosts opening one fresh database at once migrate it once, under the
// advisory lock; nobody sees a half-made schema.
func TestPostgresConcurrentMigration(t *testing.T) {
	u := pgtest.URL(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, err := mailbox.Open(ctx, u, mailbox.Options{})
			if err == nil {
				_, err = db.Send(ctx, mailbox.Message{Team: "t", From: "s", To: "w", Body: "hello"})
				db.Close()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("concurrent open: %v", err)
		}
	}
	db := open(t, u, nil)
	files, _ := fs.Glob(os.DirFS("migrations/postgres"), "*.sql")
	if v, err := db.SchemaVersion(ctx); err != nil || v != len(files) {
		t.Fatalf("SchemaVersion = %d, %v; want %d", v, err, len(files))
	}
	if n := count(t, raw(t, u), `SELECT count(*) FROM teamkit_schema`); n != 1 {
		t.Fatalf("teamkit_schema has %d rows, want 1", n)
	}
	if got, _ := db.Peek(ctx, "t", "w", 0); len(got) != 8 {
		t.Fatalf("%d messages, want 8", len(got))
	}
}

func TestPostgresRefusesNewer(t *testing.T) {
	u := pgtest.URL(t)
	db := open(t, u, nil)
	db.Close()
	r := raw(t, u)
	if _, err := r.Exec(`UPDATE teamkit_schema SET version = 99`); err != nil {
		t.Fatal(err)
	}
	_, err := mailbox.Open(context.Background(), u, mailbox.Options{})
	if !errors.Is(err, mailbox.ErrTooNew) {
		t.Fatalf("Open of a version-99 database: %v, want ErrTooNew", err)
	}
}

// A database holding someone else's tables is refused, and left as it was.
func TestPostgresForeignTables(t *testing.T) {
	u := pgtest.URL(t)
	r := raw(t, u)
	if _, err := r.Exec(`CREATE TABLE messages (x int)`); err != nil {
		t.Fatal(err)
	}
	_, err := mailbox.Open(context.Background(), u, mailbox.Options{})
	if !errors.Is(err, mailbox.ErrCorrupt) {
		t.Fatalf("Open of a database with a foreign messages table: %v, want ErrCorrupt", err)
	}
	if n := count(t, r, `SELECT count(*) FROM pg_tables WHERE schemaname = 'public'`); n != 1 {
		t.Fatalf("%d tables after the refused migration, want the 1 that was there", n)
	}
}

// The password is in no error, hint or path, whichever way opening fails.
func TestPostgresPasswordNeverShown(t *testing.T) {
	good := pgtest.URL(t)
	secret := "s3cret-Pa55word"
	u, _ := url.Parse(good)
	wrongPW := *u
	wrongPW.User = url.UserPassword(u.User.Username(), secret)
	noServer := wrongPW
	noServer.Host = "127.0.0.1:1"
	inQuery := *u
	inQuery.User = url.User(u.User.Username())
	inQuery.RawQuery = "sslmode=disable&password=" + secret
	inQuery.Host = "127.0.0.1:1"
	for _, tc := range []struct {
		name string
		url  string
		kind error
	}{
		{"wrong password", wrongPW.String(), mailbox.ErrAuth},
		{"nothing listening", noServer.String() + "&connect_timeout=5", mailbox.ErrConnect},
		{"password parameter", inQuery.String(), mailbox.ErrConnect},
		{"unparsable", "postgres://u:" + secret + "@h:notaport/db", mailbox.ErrBadURL},
		{"no answer", silent(t, noServer) + "&connect_timeout=1", mailbox.ErrConnect},
	} {
		_, err := mailbox.Open(context.Background(), tc.url, mailbox.Options{})
		if !errors.Is(err, tc.kind) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.kind)
		}
		// Only a server that took the connection and never answered is
		// worth trying again (a supervisor does, for a while).
		if timedOut := mailbox.ConnectTimedOut(err); timedOut != (tc.name == "no answer") {
			t.Errorf("%s: ConnectTimedOut(%v) = %v", tc.name, err, timedOut)
		}
		var me *mailbox.Error
		if err == nil || !errors.As(err, &me) {
			t.Errorf("%s: error %v is not a *mailbox.Error", tc.name, err)
			continue
		}
		for _, s := range []string{err.Error(), me.Hint(), me.Path} {
			if strings.Contains(s, secret) {
				t.Errorf("%s: the password shows in %q", tc.name, s)
			}
		}
	}
	db := open(t, good, nil)
	if pw := pgtest.Password(); pw != "" && strings.Contains(db.Path(), pw) {
		t.Errorf("Path() = %q shows the password", db.Path())
	}
}

// silent is u with its host a listener that takes connections and never
// answers, until the test ends.
func silent(t *testing.T, u url.URL) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	u.Host = ln.Addr().String()
	return u.String()
}

// A lock excludes every other holder of the mailbox — another handle here,
// another host there — until unlocked. (That a holder's death releases it
// is tested with real processes in multihost_test.go.)
func TestLock(t *testing.T) { eachBackend(t, testLock) }

func testLock(t *testing.T, be backend) {
	_, _, path := newDB(t, be)
	a, b := open(t, path, nil), open(t, path, nil)
	la, _ := a.Lock("t", "w1.spawn")
	lb, _ := b.Lock("t", "w1.spawn")
	other, _ := b.Lock("t", "w2.spawn")
	elsewhere, _ := b.Lock("u", "w1.spawn")
	if ok, err := la.TryLock(); !ok || err != nil {
		t.Fatalf("first TryLock = %v, %v", ok, err)
	}
	if ok, err := lb.TryLock(); ok || err != nil {
		t.Fatalf("TryLock of a held lock = %v, %v; want false", ok, err)
	}
	for _, l := range []*mailbox.Lock{other, elsewhere} {
		if ok, err := l.TryLock(); !ok || err != nil {
			t.Fatalf("TryLock of another lock = %v, %v", ok, err)
		}
		l.Unlock()
	}
	if err := la.Unlock(); err != nil {
		t.Fatal(err)
	}
	if ok, err := lb.TryLock(); !ok || err != nil {
		t.Fatalf("TryLock after Unlock = %v, %v", ok, err)
	}
	lb.Unlock()
}

// Stale's query is served by a partial index of unread messages, never a
// scan of the table or of the whole history, so its cost follows the
// unread part. (Which of the two the planner picks at 10M messages, and
// what it costs, is measured in docs/SCALING.md; the table here is tiny,
// so sequential scans are switched off to see what the indexes offer.)
func TestPostgresStaleUsesCoveringIndex(t *testing.T) {
	u := pgtest.URL(t)
	open(t, u, nil)
	r := raw(t, u)
	conn, err := r.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := context.Background()
	conn.ExecContext(ctx, `SET enable_seqscan = off`)
	conn.ExecContext(ctx, `SET enable_bitmapscan = off`)
	for _, byRecipient := range []bool{false, true} {
		args := []any{"t", time.Now().UnixNano()}
		if byRecipient {
			args = append(args, "w")
		}
		rows, err := conn.QueryContext(ctx, "EXPLAIN "+mailbox.StaleQuery(byRecipient), args...)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var line string
			rows.Scan(&line)
			plan = append(plan, line)
		}
		rows.Close()
		p := strings.Join(plan, "\n")
		if !strings.Contains(p, "using messages_unread_by_") || strings.Contains(p, "Seq Scan on messages") || strings.Contains(p, "messages_by_recipient") {
			t.Errorf("stale (by recipient: %v) reads more than its index:\n%s", byRecipient, p)
		}
	}
}

// A drain pointed at a read-only server (a standby) says so, though its
// inbox is empty: it is the claim that finds out.
func TestPostgresReadOnlyDrain(t *testing.T) {
	u := pgtest.URL(t)
	open(t, u, nil).Close()
	r := raw(t, u)
	var name string
	if err := r.QueryRow(`SELECT current_database()`).Scan(&name); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Exec(`ALTER DATABASE "` + name + `" SET default_transaction_read_only = on`); err != nil {
		t.Fatal(err)
	}
	db := open(t, u, nil)
	_, err := db.Drain(context.Background(), "t", "w", 0, func([]mailbox.Message) error { return nil })
	if !errors.Is(err, mailbox.ErrReadOnly) {
		t.Fatalf("empty drain on a read-only server: %v, want ErrReadOnly", err)
	}
}

// A schema whose name would make the notification channel, teamkit.<schema>,
// longer than PostgreSQL's 63 bytes is refused when the mailbox is made,
// in one line that says why; at 55 bytes it works. (It used to be made,
// and then every write failed: "channel name too long".)
func TestPostgresLongSchema(t *testing.T) {
	u := pgtest.URL(t)
	in := func(schema string) string {
		if _, err := raw(t, u).Exec(`CREATE SCHEMA ` + schema); err != nil {
			t.Fatal(err)
		}
		p, _ := url.Parse(u)
		q := p.Query()
		q.Set("search_path", schema)
		p.RawQuery = q.Encode()
		return p.String()
	}
	long := strings.Repeat("s", 56)
	_, err := mailbox.Open(context.Background(), in(long), mailbox.Options{})
	if err == nil || !strings.Contains(err.Error(), "may be at most 55 bytes") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("Open in a %d-byte schema: %v", len(long), err)
	}
	// A search_path that names no schema at all is PostgreSQL's to say.
	p, _ := url.Parse(u)
	q := p.Query()
	q.Set("search_path", "nosuchschema")
	p.RawQuery = q.Encode()
	if _, err := mailbox.Open(context.Background(), p.String(), mailbox.Options{}); err == nil || !strings.Contains(err.Error(), "no schema has been selected") {
		t.Fatalf("Open with no schema on the search path: %v", err)
	}
	db := open(t, in(strings.Repeat("s", 55)), nil)
	if _, err := db.Send(context.Background(), mailbox.Message{Team: "t", From: "a", To: "b", Body: "hi"}); err != nil {
		t.Fatalf("Send in a 55-byte schema: %v", err)
	}
}

// A database whose DBA made every transaction serializable by default
// (default_transaction_isolation) is used as teamkit is built for, read
// committed: drains side by side share out the inbox without the
// serialization failures (SQLSTATE 40001) that isolation raises between
// them, each message delivered once.
func TestPostgresSerializableDefault(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	if _, err := raw(t, url).ExecContext(ctx, `DO $$ BEGIN
		EXECUTE format('ALTER DATABASE %I SET default_transaction_isolation = %L', current_database(), 'serializable');
	END $$`); err != nil {
		t.Fatal(err)
	}
	db := open(t, url, nil)
	const n = 300
	for i := range n {
		send(t, db, "t", "s", "w", fmt.Sprint(i))
	}
	var mu sync.Mutex
	seen := map[int64]int{}
	var wg sync.WaitGroup
	for range 6 {
		d := open(t, url, nil)
		wg.Go(func() {
			for !t.Failed() {
				got, err := d.Drain(ctx, "t", "w", 5, func([]mailbox.Message) error { return nil })
				if err != nil {
					t.Errorf("drain: %v", err)
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, m := range got {
					seen[m.ID]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for id, k := range seen {
		if k != 1 {
			t.Errorf("message %d delivered %d times", id, k)
		}
	}
	if len(seen) != n {
		t.Errorf("%d of %d messages delivered", len(seen), n)
	}
}
