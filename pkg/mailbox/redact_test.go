package mailbox_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/teamkit/teamkit/internal/pgtest"
	"github.com/teamkit/teamkit/pkg/mailbox"
)

// TestPathHidesPasswordWithHash: a postgres:// URL whose password holds a
// '#' (or '?') that is not percent-encoded is one pgx accepts (like libpq,
// the userinfo runs to the '@' before the first '/'), but net/url reads the
// '#' as the start of a fragment. Path() ("the PostgreSQL URL without its
// password"), which spawn, inbox and inbox copy print, must still not show
// the password.
func TestPathHidesPasswordWithHash(t *testing.T) {
	base := pgtest.URL(t)
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	role := fmt.Sprintf("audit_hash_%d", os.Getpid())
	const secret = "2024#Winter"
	dbname := strings.TrimPrefix(u.Path, "/")
	for _, q := range []string{
		fmt.Sprintf("CREATE ROLE %s LOGIN PASSWORD '%s'", role, secret),
		fmt.Sprintf("ALTER DATABASE %s OWNER TO %s", dbname, role),
	} {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), base)
		if err == nil {
			c.Exec(context.Background(), fmt.Sprintf("ALTER DATABASE %s OWNER TO CURRENT_USER", dbname))
			c.Exec(context.Background(), fmt.Sprintf("DROP OWNED BY %s", role))
			c.Exec(context.Background(), fmt.Sprintf("DROP ROLE IF EXISTS %s", role))
			c.Close(context.Background())
		}
	})
	raw := fmt.Sprintf("postgres://%s:%s@%s%s", role, secret, u.Host, u.Path)
	db, err := mailbox.Open(ctx, raw, mailbox.Options{})
	if err != nil {
		t.Fatalf("open %s: %v", strings.ReplaceAll(raw, secret, "SECRET"), err)
	}
	defer db.Close()
	// No piece of the password either side of the '#', and the rest of the
	// URL intact: exactly the URL without its password.
	if want := fmt.Sprintf("postgres://%s@%s%s", role, u.Host, u.Path); db.Path() != want {
		t.Errorf("Path() = %q, want %q (the URL without the password %q)", db.Path(), want, secret)
	}
	for _, part := range strings.Split(secret, "#") {
		if strings.Contains(db.Path(), part) {
			t.Errorf("Path() = %q shows %q of the password %q", db.Path(), part, secret)
		}
	}
}

// TestOpenErrorHidesPasswordWithHash: a URL pgx cannot parse (a bad port)
// has no password to scrub with (the connector returns none), so the
// error shows the URL as redact leaves it.
func TestOpenErrorHidesPasswordWithHash(t *testing.T) {
	_, err := mailbox.Open(context.Background(), "postgres://app:2024#Winter@127.0.0.1:notaport/team", mailbox.Options{})
	if err == nil {
		t.Fatal("opened")
	}
	for _, part := range []string{"2024", "Winter"} {
		if strings.Contains(err.Error(), part) {
			t.Errorf("error %q shows %q of the password 2024#Winter", err, part)
		}
	}
}
