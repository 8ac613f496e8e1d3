package command

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// normalize rewrites args so urfave/cli sees every flag before the positional
// arguments: "stale myteam --min 10" becomes "stale --min 10 -- myteam".
// urfave/cli v2 stops parsing flags at the first positional argument; users of
// a POSIX toolkit expect flags anywhere. A "--" written by the user still ends
// the flags, so a message body may start with "-". When the first positional
// argument names no subcommand and def is set, def is inserted (inbox's
// implicit drain).
//
// implied reports whether def was inserted; missing is a flag that takes a
// value but was given last, with none (left out of out).
func normalize(app *cli.App, def string, args []string) (out []string, implied bool, missing string) {
	if len(args) == 0 {
		return args, false, ""
	}
	// flag name → takes a value; built at the first flag, as most runs (an
	// agent's "inbox drain" every turn) pass none, and every flag's Names
	// allocates.
	var valued map[string]bool
	takesValue := func(name string) bool {
		if valued == nil {
			valued = map[string]bool{}
			collect := func(fs []cli.Flag) {
				for _, f := range fs {
					_, isBool := f.(*cli.BoolFlag)
					for _, n := range f.Names() {
						valued[n] = !isBool
					}
				}
			}
			collect(app.Flags)
			for _, c := range app.Commands {
				collect(c.Flags)
			}
		}
		return valued[name]
	}

	var flags, pos []string
	rest := args[1:]
	for i := 0; i < len(rest); i++ {
		tok := rest[i]
		if tok == "--" {
			pos = append(pos, rest[i+1:]...)
			break
		}
		if len(tok) < 2 || tok[0] != '-' {
			pos = append(pos, tok)
			continue
		}
		flags = append(flags, tok)
		name := strings.TrimLeft(tok, "-")
		if strings.Contains(name, "=") {
			continue
		}
		if takesValue(name) {
			if i+1 == len(rest) {
				// The flag is last, with no value: moved before the
				// positional arguments, it would take their "--".
				missing = tok
				flags = flags[:len(flags)-1]
				continue
			}
			i++
			flags = append(flags, rest[i])
		}
	}

	out = []string{args[0]}
	if len(pos) > 0 && app.Command(pos[0]) != nil {
		out = append(out, pos[0])
		pos = pos[1:]
	} else if def != "" && !isHelp(flags) {
		out = append(out, def)
		implied = true
	}
	out = append(out, flags...)
	if len(pos) > 0 {
		out = append(out, "--")
		out = append(out, pos...)
	}
	return out, implied, missing
}

// isHelp keeps "inbox --help" (and --version) about the whole command, not
// about drain.
func isHelp(flags []string) bool {
	for _, f := range flags {
		if f == "-h" || f == "--help" || f == "-help" || f == "--version" || f == "-version" {
			return true
		}
	}
	return false
}
