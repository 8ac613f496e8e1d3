package command

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/teamkit/teamkit/pkg/mailbox"
)

// PostgresProgram serves postgres:// mailboxes for the commands built
// without the PostgreSQL client (inbox, stale, ready: the ones an agent
// runs every turn). Linking pgx costs each run of them its TLS, x509 and
// type-table initializers and ~150 page faults (docs/BENCHMARKS.md), which
// a SQLite user would pay for nothing; so they link SQLite alone and hand a
// PostgreSQL run, unchanged, to this program installed beside them:
// "teamkit-postgres inbox <args>" is "inbox <args>" with both backends.
const PostgresProgram = "teamkit-postgres"

// wantsPostgres reports whether a run may open a PostgreSQL mailbox:
// TEAMKIT_DB, or any argument (--db, inbox copy's --from and --to), is a
// postgres:// URL. An argument that only looks like one (a message that is
// a URL) hands off too, harmlessly: the other program runs the same
// command the same way.
func wantsPostgres(args []string, getenv func(string) string) bool {
	if mailbox.IsPostgres(getenv("TEAMKIT_DB")) {
		return true
	}
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			if _, v, ok := strings.Cut(a, "="); ok {
				a = v
			}
		}
		if mailbox.IsPostgres(a) {
			return true
		}
	}
	return false
}

// handOff runs args (args[0] the command's name) in PostgresProgram when
// this binary has no PostgreSQL client and the run wants one; ok is false
// when this binary should run it itself.
func handOff(app App, args []string, env *Env) (code int, ok bool) {
	if mailbox.HasPostgres() || !wantsPostgres(args[1:], env.Getenv) {
		return 0, false
	}
	name := app.Build(env).Name
	path, err := postgresProgram()
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: error: a postgres:// mailbox needs %s, which is not installed: %v\n", name, PostgresProgram, err)
		fmt.Fprintf(env.Stderr, "%s: hint: install it beside %s (go install github.com/teamkit/teamkit/cmd/...)\n", name, name)
		return ExitFailure, true
	}
	code, err = run(path, append([]string{PostgresProgram, name}, args[1:]...))
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: error: run %s: %v\n", name, path, err)
		return ExitFailure, true
	}
	return code, true
}

// postgresProgram is PostgresProgram in this executable's directory (the
// set installed together), else on PATH.
func postgresProgram() (string, error) {
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), PostgresProgram+exeSuffix)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
	}
	return exec.LookPath(PostgresProgram)
}

// MainOf is PostgresProgram's Main: args[1] names which of apps to run with
// the arguments after it.
func MainOf(apps map[string]App) int {
	if len(os.Args) > 1 {
		if app, ok := apps[os.Args[1]]; ok {
			return mainArgs(app, OS(), os.Args[1:])
		}
	}
	var names []string
	for n := range apps {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintf(os.Stderr, "%s: error: usage: %s %s [args]\n", PostgresProgram, PostgresProgram, strings.Join(names, "|"))
	fmt.Fprintf(os.Stderr, "%s: hint: the commands run it for a postgres:// mailbox; run them instead\n", PostgresProgram)
	return ExitUsage
}
