// Package docgen makes the commands' generated files — man pages and shell
// completions — for `make docs` (scripts/gendocs) and the test that keeps
// them current. It renders man pages with urfave/cli's markdown-to-roff
// path (go-md2man, blackfriday), which no command links: the commands are
// built with the tag urfave_cli_no_docs (Makefile), which leaves that path
// out of urfave/cli, and never import this package.
//
// Internal: the commands' own code; no user should import it.
package docgen

import (
	"errors"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/teamkit/teamkit/internal/command"
)

// Docs are the generated files of one command — its man page and its
// completion scripts — by path relative to the repository root, made from
// the same urfave/cli definitions the command runs with.
func Docs(name string, app command.App) (map[string]string, error) {
	out := map[string]string{}
	man, err := manPage(command.ForDocs(app))
	if err != nil {
		return nil, err
	}
	out["docs/man/"+name+".1"] = man
	a := command.ForDocs(app)
	for _, sh := range command.Shells {
		s, err := command.Completion(a, sh)
		if err != nil {
			return nil, err
		}
		out[command.CompletionPath(name, sh)] = s
	}
	return out, nil
}

// manPage renders a's man page. urfave/cli writes it as markdown first,
// where "<team>" reads as an HTML tag and vanishes, so the angle brackets
// of the help text are written as entities for the markdown step.
func manPage(a *cli.App) (string, error) {
	esc := strings.NewReplacer("<", "&lt;", ">", "&gt;")
	synopsis := a.UsageText
	a.Description, a.UsageText, a.ArgsUsage = esc.Replace(a.Description), esc.Replace(a.UsageText), esc.Replace(a.ArgsUsage)
	var walk func([]*cli.Command)
	walk = func(cs []*cli.Command) {
		for _, c := range cs {
			c.Usage, c.Description, c.UsageText, c.ArgsUsage = esc.Replace(c.Usage), esc.Replace(c.Description), esc.Replace(c.UsageText), esc.Replace(c.ArgsUsage)
			walk(c.Subcommands)
		}
	}
	walk(a.Commands)
	man, err := a.ToManWithSection(1)
	if err != nil {
		return "", err
	}
	// The roff renderer passes the entities through; roff itself wants the
	// characters.
	man = strings.NewReplacer("&lt;", "<", "&gt;", ">").Replace(man)
	return withSynopsis(man, synopsis)
}

// withSynopsis replaces urfave/cli's SYNOPSIS — the bare command name and
// a list of the top-level flags — with the command's usage lines, one form
// a line, as its --help shows them.
func withSynopsis(man, usage string) (string, error) {
	start := strings.Index(man, ".SH SYNOPSIS\n")
	if start < 0 {
		return "", errors.New("man page without a SYNOPSIS section")
	}
	body := start + len(".SH SYNOPSIS\n")
	end := strings.Index(man[body:], ".SH ")
	if end < 0 {
		return "", errors.New("man page ends in its SYNOPSIS section")
	}
	roff := strings.NewReplacer(`\`, `\e`, "-", `\-`)
	var b strings.Builder
	b.WriteString(".nf\n")
	for _, line := range strings.Split(strings.TrimSpace(usage), "\n") {
		b.WriteString(`\&` + roff.Replace(strings.TrimSpace(line)) + "\n")
	}
	b.WriteString(".fi\n\n")
	return man[:body] + b.String() + man[body+end:], nil
}
