package command

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"
)

func TestNormalize(t *testing.T) {
	app := &cli.App{
		Flags: []cli.Flag{&cli.Float64Flag{Name: "min"}, &cli.BoolFlag{Name: "json"}},
		Commands: []*cli.Command{
			{Name: "send", Flags: []cli.Flag{&cli.StringFlag{Name: "from"}, &cli.StringFlag{Name: "subject"}}},
			{Name: "drain", Flags: []cli.Flag{&cli.BoolFlag{Name: "peek"}, &cli.IntFlag{Name: "limit"}}},
		},
	}
	cases := []struct {
		def  string
		in   []string
		want []string
	}{
		{"", []string{"stale", "myteam", "--min", "10"}, []string{"stale", "--min", "10", "--", "myteam"}},
		{"", []string{"stale", "--json", "myteam"}, []string{"stale", "--json", "--", "myteam"}},
		{"drain", []string{"inbox", "t", "w1", "--peek", "--limit", "3"}, []string{"inbox", "drain", "--peek", "--limit", "3", "--", "t", "w1"}},
		{"drain", []string{"inbox", "send", "t", "w1", "--from", "lead", "--", "-body"}, []string{"inbox", "send", "--from", "lead", "--", "t", "w1", "-body"}},
		{"drain", []string{"inbox", "--subject", "-x", "send", "t", "w1", "b"}, []string{"inbox", "send", "--subject", "-x", "--", "t", "w1", "b"}},
		{"drain", []string{"inbox", "send", "t", "w1", "-"}, []string{"inbox", "send", "--", "t", "w1", "-"}},
		{"drain", []string{"inbox", "--from=lead", "send", "t"}, []string{"inbox", "send", "--from=lead", "--", "t"}},
		{"drain", []string{"inbox", "--help"}, []string{"inbox", "--help"}},
		{"drain", []string{"inbox"}, []string{"inbox", "drain"}},
	}
	for _, c := range cases {
		if got, _, _ := normalize(app, c.def, c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("normalize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// A flag that takes a value, given last with none, is named; it must not
// take the "--" that normalize puts before the positional arguments.
func TestNormalizeMissingValue(t *testing.T) {
	app := &cli.App{Flags: []cli.Flag{&cli.Float64Flag{Name: "min"}, &cli.BoolFlag{Name: "json"}}}
	for _, in := range [][]string{{"stale", "myteam", "--min"}, {"stale", "--json", "myteam", "--min"}, {"stale", "--min"}} {
		if _, _, missing := normalize(app, "", in); missing != "--min" {
			t.Errorf("normalize(%q): missing %q, want --min", in, missing)
		}
	}
	if _, _, missing := normalize(app, "", []string{"stale", "myteam", "--json"}); missing != "" {
		t.Errorf("a bool flag last: missing %q", missing)
	}
}

func TestQuoteValue(t *testing.T) {
	for in, want := range map[string]string{
		"plain": "plain", "": `""`, "two words": `"two words"`, "a=b": `"a=b"`, "tab\t": `"tab\t"`, "é": "é",
	} {
		if got := QuoteValue(in); got != want {
			t.Errorf("QuoteValue(%q) = %s, want %s", in, got, want)
		}
	}
}

// A duration written correctly but too long for a time.Duration is out of
// range, not "not a duration"; a typo still is not one.
func TestParseDurationRange(t *testing.T) {
	for s, want := range map[string]string{
		"99999999h":        `"99999999h" is out of range`,
		"2562048h":         `"2562048h" is out of range`,
		"-99999999h":       `"-99999999h" is out of range`,
		"9999999999999m1s": `"9999999999999m1s" is out of range`,
		"106751d":          `"106751d" is out of range (at most 2562047h`,
		"99999999x":        `"99999999x" is not a duration`,
		"1h1":              `"1h1" is not a duration`,
		"h":                `"h" is not a duration`,
	} {
		if _, err := ParseDuration(s); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("ParseDuration(%q) = %v, want %s…", s, err, want)
		}
	}
	if d, err := ParseDuration("2562047h"); err != nil || d != 2562047*time.Hour {
		t.Errorf("ParseDuration(2562047h) = %v, %v", d, err)
	}
}
