package pgtest_test

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/teamkit/teamkit/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

// Each test gets its own empty database on the one server.
func TestFreshDatabases(t *testing.T) {
	ctx := context.Background()
	a, b := pgtest.URL(t), pgtest.URL(t)
	if a == b {
		t.Fatalf("two calls gave the same database %s", a)
	}
	for _, u := range []string{a, b} {
		c, err := pgx.Connect(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		var n int
		if err := c.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE schemaname = 'public'`).Scan(&n); err != nil || n != 0 {
			t.Fatalf("fresh database has %d tables (%v)", n, err)
		}
		if _, err := c.Exec(ctx, `CREATE TABLE x (a int)`); err != nil {
			t.Fatal(err)
		}
		c.Close(ctx)
	}
}
