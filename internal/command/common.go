package command

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/names"
	"github.com/teamkit/teamkit/pkg/termsafe"
)

// Flags every command takes.
var (
	DBFlag   = &cli.StringFlag{Name: "db", Usage: "mailbox: a SQLite file `PATH` or a postgres:// URL (default $TEAMKIT_DB, else $XDG_STATE_HOME/teamkit/teamkit.db)"}
	JSONFlag = &cli.BoolFlag{Name: "json", Usage: "print JSON, one object per line"}
)

// Common returns flags with --db and --json appended.
func Common(flags ...cli.Flag) []cli.Flag {
	return append(flags, DBFlag, JSONFlag)
}

// DBPath is the mailbox the command uses: --db, then TEAMKIT_DB, then the XDG
// state directory. explicit reports whether the user chose it (a chosen
// path's directory must exist; the default one is created).
func DBPath(c *cli.Context, env *Env) (path string, explicit bool) {
	if p := c.String("db"); p != "" {
		return p, true
	}
	if p := env.Getenv("TEAMKIT_DB"); p != "" {
		return p, true
	}
	return filepath.Join(StateDir(env), "teamkit.db"), false
}

// RunsDir is where the run files of the command's mailbox live
// (mailbox.RunsDir).
func RunsDir(c *cli.Context, env *Env) string {
	db, _ := DBPath(c, env)
	return mailbox.RunsDir(StateDir(env), db)
}

// StateDir is teamkit's own directory under StateHome: the default
// mailbox, the run files of a mailbox that is a URL, built-in types
// written out.
func StateDir(env *Env) string { return filepath.Join(StateHome(env), "teamkit") }

// StateHome is $XDG_STATE_HOME, else the OS's place for per-user
// application state where it has one (%LOCALAPPDATA% on Windows), else
// ~/.local/state (Linux, macOS, FreeBSD), the home being $HOME or, unset,
// the user's entry in /etc/passwd (a system service, `env -i`). A relative
// XDG_STATE_HOME is ignored, as the XDG spec says. With no home at all it
// is a directory of the user's own in the system's temporary directory
// (privateTempState), never one another user could have made: the mailbox,
// and the built-in types' scripts spawn runs, are kept there.
func StateHome(env *Env) string {
	if d := env.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return d
	}
	if d := env.Getenv(osStateHomeVar); osStateHomeVar != "" && filepath.IsAbs(d) {
		return d
	}
	if h := env.Getenv("HOME"); filepath.IsAbs(h) {
		return filepath.Join(h, ".local", "state")
	}
	if h := homeOfUser(); h != "" {
		return filepath.Join(h, ".local", "state")
	}
	return privateTempState()
}

// OpenMailbox opens (creating and migrating if needed) the command's mailbox.
func OpenMailbox(ctx context.Context, c *cli.Context, env *Env) (*mailbox.DB, error) {
	path, explicit := DBPath(c, env)
	return openMailbox(ctx, c, env, path, explicit, "")
}

// WithMailbox opens the command's mailbox, runs run against it, and closes
// it. It is the second half of gh's shape for a command that acts on the
// mailbox: the command line (and environment, and stdin) is parsed into
// options first, refusing bad input before the mailbox is touched, and run
// is the options' method (o.run).
//
// It is not generic over the options, as it once was, on purpose: a
// generic function's dictionary marks its type arguments, and every type
// they reach (its run's *mailbox.DB), as converted to an interface, and
// with text/template in the binary (urfave/cli's help calls methods by
// name) the linker then keeps every exported method of each. inbox linked
// all of *mailbox.DB's methods, and what they call.
func WithMailbox(c *cli.Context, env *Env, run func(context.Context, *Env, *mailbox.DB) error) error {
	db, err := OpenMailbox(c.Context, c, env)
	if err != nil {
		return err
	}
	defer db.Close()
	return run(c.Context, env, db)
}

// OpenMailboxAt opens the mailbox at path (a file or a URL the user gave,
// such as inbox copy's --to) as OpenMailbox opens the command's. flag is
// the option path came from ("--to"), for the hints of its errors; ""
// when it was --db or TEAMKIT_DB.
func OpenMailboxAt(ctx context.Context, c *cli.Context, env *Env, path, flag string) (*mailbox.DB, error) {
	return openMailbox(ctx, c, env, path, true, flag)
}

func openMailbox(ctx context.Context, c *cli.Context, env *Env, path string, explicit bool, flag string) (*mailbox.DB, error) {
	opts := mailbox.Options{Now: env.Now, CreateDir: !explicit, Flag: flag}
	if s := env.Getenv("TEAMKIT_BUSY_TIMEOUT"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return nil, Usagef("TEAMKIT_BUSY_TIMEOUT=%q: want a duration such as 5s", s)
		}
		opts.BusyTimeout = d
	}
	_, statErr := os.Stat(path)
	db, err := mailbox.Open(ctx, path, opts)
	isFile := !mailbox.IsURL(path)
	if err == nil && explicit && (isFile && errors.Is(statErr, fs.ErrNotExist) || !isFile && db.Created()) {
		// A mistyped TEAMKIT_DB would otherwise pass for an empty team.
		// (db.Path is a URL without its password.)
		fmt.Fprintf(env.Stderr, "%s: note: created a new mailbox at %s\n", c.App.Name, db.Path())
	}
	return db, err
}

// Identity resolves the optional leading <team> [<name>] positionals: given
// want (1 for <team>, 2 for <team> <name>) and the positionals present, the
// missing leading ones come from TEAMKIT_TEAM and TEAMKIT_AGENT, the way an
// agent started by spawn writes "inbox" or "ready mark". It returns the
// identity and the positionals left over.
func Identity(env *Env, args []string, want int) (team, name string, rest []string, err error) {
	have := args
	if len(have) > want {
		have, rest = args[:want], args[want:]
	}
	vals := make([]string, want)
	missing := want - len(have)
	fromEnv := []string{env.Getenv("TEAMKIT_TEAM"), env.Getenv("TEAMKIT_AGENT")}
	envName := []string{"TEAMKIT_TEAM", "TEAMKIT_AGENT"}
	kinds := []string{"team", "agent"}
	for i := 0; i < want; i++ {
		if i < missing {
			if fromEnv[i] == "" {
				if want == 2 && len(have) == 1 {
					// "ready mark myteam": what is missing is the name after
					// the team the user gave.
					return "", "", nil, Usagef("missing <name> after <team> %q: give both <team> <name> (or set TEAMKIT_TEAM, and give <name> alone)", have[0])
				}
				return "", "", nil, Usagef("missing <%s> (give it, or set %s)", kinds[i], envName[i])
			}
			vals[i] = fromEnv[i]
		} else {
			vals[i] = have[i-missing]
		}
		if err := CheckName(kinds[i], vals[i]); err != nil {
			return "", "", nil, err
		}
	}
	team = vals[0]
	if want > 1 {
		name = vals[1]
	}
	return team, name, rest, nil
}

// CheckName validates one name for a usage error. The error quotes the
// name, so a refused URL (a mailbox typed where a team belongs) is
// described as mailbox.Redact shows it, never with its password; a
// redacted URL is no valid name either.
func CheckName(kind, s string) error {
	if err := names.Check(kind, s); err != nil {
		if shown := mailbox.Redact(s); shown != s {
			err = names.Check(kind, shown)
			if err == nil { // never the name with its password
				err = fmt.Errorf("%w: %s name %q", names.ErrInvalid, kind, shown)
			}
		}
		return &Error{Code: ExitUsage, Err: err}
	}
	return nil
}

// JSON writes v as one line of JSON, HTML characters unescaped and bidi
// controls escaped (termsafe.EscapeJSON): JSON is read on terminals too.
func JSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(termsafe.EscapeJSON(b.Bytes()))
	return err
}

// JSONLines writes each item as one line of JSON: the --json form of a list.
func JSONLines[T any](w io.Writer, items []T) error {
	for _, it := range items {
		if err := JSON(w, it); err != nil {
			return err
		}
	}
	return nil
}

// KV writes one "key=value key=value" line; values that need it are quoted
// the Go way so the line stays one line and splits on spaces.
func KV(w io.Writer, kv ...string) error {
	var b strings.Builder
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(kv[i])
		b.WriteByte('=')
		b.WriteString(QuoteValue(kv[i+1]))
	}
	b.WriteByte('\n')
	_, err := io.WriteString(w, b.String())
	return err
}

// QuoteValue quotes v when it is empty or holds spaces, quotes, '=' or
// anything unprintable.
func QuoteValue(v string) string {
	if v == "" {
		return `""`
	}
	for _, r := range v {
		if r <= ' ' || r == '"' || r == '\'' || r == '=' || r == '\\' || r == 0x7f || !strconv.IsPrint(r) {
			return strconv.Quote(v)
		}
	}
	return v
}

// FormatTime is how every command prints a time: RFC 3339, UTC.
func FormatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// Progress draws "label 12s" on stderr while a long wait runs, when stderr is
// a terminal; stop erases it. On a pipe or file it is silent.
func Progress(env *Env, label string) (stop func()) {
	if !env.StderrTTY {
		return func() {}
	}
	start := env.Now()
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			fmt.Fprintf(env.Stderr, "\r%s %ds ", label, int(env.Now().Sub(start).Seconds()))
			select {
			case <-done:
				fmt.Fprint(env.Stderr, "\r\033[K")
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); <-finished }
}

// NoteUnknownTeam says on stderr when team has no agent and no message in
// db: most likely a typo ("stale nosuchteam" would otherwise look healthy).
// It is a note: the exit code stays what the command decides, so cron stays
// quiet when told to (2>/dev/null).
func NoteUnknownTeam(ctx context.Context, env *Env, cmd string, db *mailbox.DB, team string) {
	known, err := db.TeamKnown(ctx, team)
	if err != nil || known {
		return
	}
	fmt.Fprintf(env.Stderr, "%s: note: team %q has no agents and no messages in %s (a typo?)\n", cmd, team, db.Path())
}
