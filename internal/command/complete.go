package command

import (
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/names"
)

// CompleteFlag, as the last argument, asks a command for the words that may
// come next (urfave/cli's flag): the words before the cursor come first,
// then the word being typed ("" for none), so that "--team <TAB>" and
// "--te<TAB>" differ. The shell filters by what is typed.
const CompleteFlag = "--generate-bash-completion"

// partialKey holds, in the app's Metadata, the flag being typed ("--" for
// "inbox t w --<TAB>") or teamValue, kept from urfave/cli: a "--" argument
// would switch its completion off.
const partialKey = "teamkit-complete-partial"

// teamValue, as the partial word, means the word being typed is --team's
// value.
const teamValue = "\x00team"

// complete prints the completions of the command line args (without
// CompleteFlag), one a line. It never fails and never writes to stderr: a
// shell's Tab key shows no errors, it just completes nothing.
func complete(ctx context.Context, app App, env *Env, args []string) int {
	quiet := *env
	quiet.Stderr = io.Discard
	a := prepare(app, &quiet)
	a.ErrWriter = io.Discard
	a.EnableBashCompletion = true
	words, partial := args[1:], ""
	if n := len(words); n > 0 {
		if strings.HasPrefix(words[n-1], "-") {
			partial = words[n-1]
		}
		words = words[:n-1]
	}
	if n := len(words); n > 0 && words[n-1] == "--team" && partial == "" {
		// "spawn claude w1 --team <TAB>", "ask --team <TAB>": a team.
		partial, words = teamValue, words[:n-1]
	} else if n > 0 && partial == "" && takesValue(a, words[n-1]) {
		// "--db <TAB>", "--older <TAB>": the flag's value, which the
		// command does not know; the shell offers files.
		return ExitOK
	}
	norm, _, _ := normalize(a, "", append([]string{a.Name}, words...))
	if slices.Contains(norm, "--") {
		// A positional word, so the implied verb (inbox's drain) applies.
		norm, _, _ = normalize(a, app.Default, append([]string{a.Name}, words...))
	}
	norm = slices.DeleteFunc(norm, func(s string) bool { return s == "--" })
	a.Metadata = map[string]any{partialKey: partial}
	rootUsage := a.ArgsUsage
	if d := a.Command(app.Default); app.Default != "" && d != nil {
		// "inbox <TAB>": the verbs, and the implied verb's first word.
		rootUsage = d.ArgsUsage
	}
	a.BashComplete = completeHook(&quiet, app, rootUsage, a.VisibleCommands())
	var hook func([]*cli.Command)
	hook = func(cs []*cli.Command) {
		for _, c := range cs {
			c.BashComplete = completeHook(&quiet, app, c.ArgsUsage, c.VisibleCommands())
			hook(c.Subcommands)
		}
	}
	hook(a.Commands)
	_ = a.RunContext(ctx, append(norm, CompleteFlag))
	return ExitOK
}

// completeHook completes one command's next word: its flags when a flag is
// being typed, else its verbs (before any positional) and what its
// ArgsUsage names at that position — <team> a team, <name> or <to> an agent
// of the team given before it (and its mail's recipients, App.Mail),
// <type> an agent type (App.Types).
func completeHook(env *Env, app App, argsUsage string, verbs []*cli.Command) cli.BashCompleteFunc {
	kinds := argKinds().FindAllStringSubmatch(argsUsage, -1)
	return func(c *cli.Context) {
		p, _ := c.App.Metadata[partialKey].(string)
		if p == teamValue {
			printWords(c, teamWords(c, env))
			return
		}
		if p != "" {
			printWords(c, flagWords(c.Command.VisibleFlags()))
			return
		}
		args := c.Args().Slice()
		var out []string
		if len(args) == 0 {
			for _, v := range verbs {
				out = append(out, v.Name)
			}
		}
		if len(args) < len(kinds) {
			switch kinds[len(args)][1] {
			case "team":
				out = append(out, teamWords(c, env)...)
			case "name", "to":
				if t := slices.IndexFunc(kinds[:len(args)], func(k []string) bool { return k[1] == "team" }); t >= 0 {
					out = append(out, agentWords(c, env, args[t], app.Mail)...)
				}
			case "type":
				if app.Types != nil {
					out = append(out, app.Types(env)...)
				}
			}
		}
		printWords(c, out)
	}
}

// takesValue reports whether word is a flag, of the app or any of its
// verbs, that takes a value (not a bool flag, nor "--db=PATH").
func takesValue(a *cli.App, word string) bool {
	name, long := strings.CutPrefix(strings.TrimPrefix(word, "-"), "-")
	if !strings.HasPrefix(word, "-") || !long && len(name) != 1 || strings.Contains(name, "=") {
		return false
	}
	flags := a.Flags
	var walk func([]*cli.Command)
	walk = func(cs []*cli.Command) {
		for _, c := range cs {
			flags = append(flags, c.Flags...)
			walk(c.Subcommands)
		}
	}
	walk(a.Commands)
	for _, f := range flags {
		if d, ok := f.(cli.DocGenerationFlag); ok && d.TakesValue() && slices.Contains(f.Names(), name) {
			return true
		}
	}
	return false
}

// argKinds are the <placeholders> of an ArgsUsage, in order; "[BODY|-]"
// and the like complete nothing. Compiled on first use, as invalidValue.
var argKinds = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`<([a-z]+)>`) })

func printWords(c *cli.Context, words []string) {
	for _, w := range words {
		fmt.Fprintln(c.App.Writer, w)
	}
}

// withMailbox runs f against the command's mailbox if it exists. A
// completion never creates or migrates one: a missing SQLite file, or a
// database without teamkit's current schema, completes nothing.
func withMailbox(c *cli.Context, env *Env, f func(context.Context, *mailbox.DB) ([]string, error)) []string {
	path, _ := DBPath(c, env)
	if !mailbox.IsURL(path) {
		if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
			return nil
		}
	}
	// A Tab key must not hang on a mailbox locked or out of reach.
	ctx, cancel := context.WithTimeout(c.Context, 3*time.Second)
	defer cancel()
	db, err := mailbox.Open(ctx, path, mailbox.Options{Now: env.Now, BusyTimeout: time.Second, Existing: true})
	if err != nil {
		return nil
	}
	defer db.Close()
	out, err := f(ctx, db)
	if err != nil {
		return nil
	}
	return out
}

func teamWords(c *cli.Context, env *Env) []string {
	return validNames("team", withMailbox(c, env, func(ctx context.Context, db *mailbox.DB) ([]string, error) {
		return db.Teams(ctx, maxWords)
	}))
}

// validNames keeps the words that are names teamkit accepts (names.Check).
// Whoever can write the mailbox (an agent, another host of a shared one)
// can store any text as a team or recipient, and bash's compgen -W
// expands the words it offers, $(…) included: a word that is no name
// would be run by the shell of the person pressing Tab.
func validNames(kind string, words []string) []string {
	out := words[:0]
	for _, w := range words {
		if names.Check(kind, w) == nil {
			out = append(out, w)
		}
	}
	return out
}

// maxWords bounds the teams, and the names of a team's mail, a Tab key
// reads: it lists a screenful, not a mailing list.
const maxWords = 200

// agentWords are the team's agents, and with mail the names its mail went
// to that were never spawned (a human, a lead: a drain's name as much as
// an agent's), in name order.
func agentWords(c *cli.Context, env *Env, team string, mail bool) []string {
	return validNames("agent", withMailbox(c, env, func(ctx context.Context, db *mailbox.DB) ([]string, error) {
		agents, err := db.AgentsWithoutTasks(ctx, team)
		var out []string
		if err == nil && mail {
			out, err = db.Recipients(ctx, team, maxWords)
		}
		if err != nil {
			return nil, err
		}
		for _, a := range agents {
			out = append(out, a.Name)
		}
		slices.Sort(out)
		return slices.Compact(out), err
	}))
}
