package command

import (
	"slices"
	"testing"

	"github.com/urfave/cli/v2"
)

// Every flag of every verb is named once, urfave/cli's own --help and
// --version included, and keeps its names, its kind and what it parses.
func TestFlagsNamedOnce(t *testing.T) {
	a := prepare(App{Build: func(*Env) *cli.App {
		return &cli.App{
			Name:  "t",
			Flags: []cli.Flag{&cli.StringFlag{Name: "db", Aliases: []string{"d"}}, &cli.BoolFlag{Name: "json"}},
			Commands: []*cli.Command{{Name: "v", Flags: []cli.Flag{
				&cli.IntFlag{Name: "limit"}, &cli.Int64Flag{Name: "id"}, &cli.Float64Flag{Name: "min"},
				&cli.GenericFlag{Name: "at", Value: &cli.StringSlice{}},
			}}},
		}
	}}, OS())
	flags := a.Flags
	for _, c := range a.Commands {
		flags = append(flags, c.Flags...)
	}
	flags = append(flags, cli.HelpFlag, cli.VersionFlag)
	for _, f := range flags {
		switch f.(type) {
		case *cli.BoolFlag, *cli.StringFlag, *cli.IntFlag, *cli.Int64Flag, *cli.Float64Flag, *cli.GenericFlag:
			t.Errorf("flag %v: names computed on every call", f.Names())
		}
	}
	if got := a.Flags[0].Names(); !slices.Equal(got, []string{"db", "d"}) {
		t.Errorf("--db's names: %q", got)
	}
	for _, c := range []struct {
		f             cli.Flag
		whole, number bool
	}{{a.Commands[0].Flags[0], true, true}, {a.Commands[0].Flags[1], true, true}, {a.Commands[0].Flags[2], false, true}, {a.Flags[0], false, false}} {
		if whole, number := numberKind(c.f); whole != c.whole || number != c.number {
			t.Errorf("numberKind(%v) = %v, %v", c.f.Names(), whole, number)
		}
	}
}
