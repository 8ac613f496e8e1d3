//go:build linux

package teamkit_test

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/teamkit/teamkit/internal/pgtest"
)

// TestPostgresErrors runs testdata/postgres against the throwaway cluster:
// the README's quick start (a role and a database it owns), and every way
// of getting it wrong, each of which must get its own hint. The scripts
// find the URLs in $PG_OWNED (the quick start), $PG_NORIGHTS (a role with
// no rights in a database someone else owns, as `createdb teamkit` alone
// gives on PostgreSQL 15), $PG_BADPW, $PG_NODB, $PG_TLS_REQUIRE and
// $PG_TLS_VERIFY (the cluster has no TLS), and $PG_CLOSED (a closed port).
func TestPostgresErrors(t *testing.T) {
	base, err := url.Parse(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	id := fmt.Sprintf("%d", os.Getpid())
	owner, none := "tk_owner_"+id, "tk_none_"+id
	owned, foreign := "tk_owned_"+id, "tk_foreign_"+id
	for _, sql := range []string{
		"CREATE ROLE " + owner + " LOGIN PASSWORD 'owner-pw-1234'",
		"CREATE ROLE " + none + " LOGIN PASSWORD 'none-pw-5678'",
		"CREATE DATABASE " + owned + " OWNER " + owner,
		"CREATE DATABASE " + foreign,
	} {
		if err := pgtest.Admin(sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	t.Cleanup(func() {
		for _, sql := range []string{
			"DROP DATABASE IF EXISTS " + owned + " WITH (FORCE)", "DROP DATABASE IF EXISTS " + foreign + " WITH (FORCE)",
			"DROP ROLE IF EXISTS " + owner, "DROP ROLE IF EXISTS " + none,
		} {
			pgtest.Admin(sql)
		}
	})
	as := func(user, pw, db, sslmode string) string {
		u := *base
		u.User = url.UserPassword(user, pw)
		u.Path = "/" + db
		u.RawQuery = "sslmode=" + sslmode
		return u.String()
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	urls := map[string]string{
		"PG_OWNED":       as(owner, "owner-pw-1234", owned, "disable"),
		"PG_NORIGHTS":    as(none, "none-pw-5678", foreign, "disable"),
		"PG_BADPW":       as(owner, "wrong-pw-9999", owned, "disable"),
		"PG_NODB":        as(owner, "owner-pw-1234", "tk_nosuch_"+id, "disable"),
		"PG_TLS_REQUIRE": as(owner, "owner-pw-1234", owned, "require"),
		"PG_TLS_VERIFY":  as(owner, "owner-pw-1234", owned, "verify-full"),
		"PG_CLOSED":      "postgres://" + owner + ":owner-pw-1234@127.0.0.1:" + closedPort + "/" + owned + "?sslmode=disable",
	}
	params := scriptParams(t, "testdata/postgres", nil, false)
	setup := params.Setup
	params.Setup = func(e *testscript.Env) error {
		if err := setup(e); err != nil {
			return err
		}
		for k, v := range urls {
			e.Setenv(k, v)
		}
		return nil
	}
	testscript.Run(t, params)
}
