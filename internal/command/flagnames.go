package command

import "github.com/urfave/cli/v2"

// urfave/cli v2 recomputes a flag's names on every Names call, each through
// a regexp (FlagNames strips v1's "name, alias" form), and calls it about
// n² times a run: IsSet looks an unset flag up among all of them by name,
// and it asks IsSet of every flag's every name before the action runs.
// That is 75 regexps for 'stale crew --min 10': 1–3% of a quick command
// (scripts/bench.sh --pair, 301 pairs). The flags here are the same flags
// with their names worked out once; Apply, on the flag inside, still
// computes them, once a flag.

// namedBool is a BoolFlag whose Names are computed once.
type namedBool struct {
	*cli.BoolFlag
	names []string
}

func (f *namedBool) Names() []string { return f.names }

type namedString struct {
	*cli.StringFlag
	names []string
}

func (f *namedString) Names() []string { return f.names }

type namedInt struct {
	*cli.IntFlag
	names []string
}

func (f *namedInt) Names() []string { return f.names }

type namedInt64 struct {
	*cli.Int64Flag
	names []string
}

func (f *namedInt64) Names() []string { return f.names }

type namedFloat64 struct {
	*cli.Float64Flag
	names []string
}

func (f *namedFloat64) Names() []string { return f.names }

type namedGeneric struct {
	*cli.GenericFlag
	names []string
}

func (f *namedGeneric) Names() []string { return f.names }

// named is f with its names computed once, for the flag types teamkit
// uses; any other is returned as it is. A number flag's kind (whole or
// not) stays known through numberKind.
func named(f cli.Flag) cli.Flag {
	switch f := f.(type) {
	case *cli.BoolFlag:
		return &namedBool{f, f.Names()}
	case *cli.StringFlag:
		return &namedString{f, f.Names()}
	case *cli.IntFlag:
		return &namedInt{f, f.Names()}
	case *cli.Int64Flag:
		return &namedInt64{f, f.Names()}
	case *cli.Float64Flag:
		return &namedFloat64{f, f.Names()}
	case *cli.GenericFlag:
		return &namedGeneric{f, f.Names()}
	}
	return f
}

// nameFlags replaces the flags of a and of all its verbs with named ones.
func nameFlags(a *cli.App) {
	each := func(fs []cli.Flag) {
		for i, f := range fs {
			fs[i] = named(f)
		}
	}
	each(a.Flags)
	var walk func([]*cli.Command)
	walk = func(cs []*cli.Command) {
		for _, c := range cs {
			each(c.Flags)
			walk(c.Subcommands)
		}
	}
	walk(a.Commands)
}

// numberKind says whether f takes a whole number, a number, or neither
// (named or not).
func numberKind(f cli.Flag) (whole, number bool) {
	switch f.(type) {
	case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag, *cli.Uint64Flag, *namedInt, *namedInt64:
		return true, true
	case *cli.Float64Flag, *namedFloat64:
		return false, true
	}
	return false, false
}
