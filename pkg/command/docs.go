package command

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"
)

// Shells completion scripts are generated for.
var Shells = []string{"bash", "zsh", "fish"}

// ForDocs is app as its generated man page and completions describe it:
// built against an empty environment, without a version (the files must
// not change with every commit). The man page is made elsewhere (package
// docgen, run by `make docs`): its markdown renderer would otherwise be
// linked, and initialized, in every command.
func ForDocs(app App) *cli.App {
	a := prepare(app, &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard,
		Getenv: func(string) string { return "" }, Environ: func() []string { return nil }})
	a.Version = ""
	a.HideVersion = false
	return a
}

// CompletionPath is where the completion script of command name for shell
// is committed, relative to the repository root.
func CompletionPath(name, shell string) string {
	switch shell {
	case "zsh":
		return "completions/zsh/_" + name
	case "fish":
		return "completions/fish/" + name + ".fish"
	}
	return "completions/bash/" + name
}

// Completion is the completion script of a for shell: its verbs, and the
// flags of the command and of each verb.
func Completion(a *cli.App, shell string) (string, error) {
	switch shell {
	case "fish":
		return a.ToFishCompletion()
	case "bash", "zsh":
	default:
		return "", Usagef("unknown shell %q (want %s)", shell, strings.Join(Shells, ", "))
	}
	verbs := map[string][]string{} // verb ("" for none) → words
	var names []string
	for _, c := range a.VisibleCommands() {
		names = append(names, c.Name)
		verbs[c.Name] = flagWords(c.VisibleFlags())
	}
	verbs[""] = append(append([]string{}, names...), flagWords(a.VisibleFlags())...)
	keys := make([]string, 0, len(verbs))
	for k := range verbs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fn := "_teamkit_" + a.Name
	var b strings.Builder
	if shell == "zsh" {
		fmt.Fprintf(&b, "#compdef %s\n", a.Name)
	}
	fmt.Fprintf(&b, "# %s completion for %s (teamkit), generated from its command definitions by `make docs`.\n", shell, a.Name)
	if shell == "bash" {
		fmt.Fprintf(&b, "# Install: copy to /usr/share/bash-completion/completions/%s, or source it from ~/.bashrc.\n", a.Name)
		fmt.Fprintf(&b, "%s() {\n\tlocal cur=${COMP_WORDS[COMP_CWORD]} verb= i\n", fn)
		fmt.Fprintf(&b, "\tfor ((i = 1; i < COMP_CWORD; i++)); do\n\t\tcase ${COMP_WORDS[i]} in %s) verb=${COMP_WORDS[i]}; break ;; esac\n\tdone\n", alternatives(names))
		b.WriteString("\tlocal words\n\tcase $verb in\n")
		for _, k := range keys {
			fmt.Fprintf(&b, "\t%s) words=%q ;;\n", caseLabel(k), strings.Join(verbs[k], " "))
		}
		b.WriteString("\tesac\n\tCOMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n}\n")
		fmt.Fprintf(&b, "complete -o default -F %s %s\n", fn, a.Name)
		return b.String(), nil
	}
	fmt.Fprintf(&b, "# Install: copy to a directory on $fpath as _%s, then run compinit.\n", a.Name)
	fmt.Fprintf(&b, "%s() {\n\tlocal verb= w\n", fn)
	fmt.Fprintf(&b, "\tfor w in ${words[2,CURRENT-1]}; do\n\t\tcase $w in %s) verb=$w; break ;; esac\n\tdone\n", alternatives(names))
	b.WriteString("\tcase $verb in\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "\t%s) compadd -- %s ;;\n", caseLabel(k), strings.Join(verbs[k], " "))
	}
	b.WriteString("\tesac\n\t_files\n}\n")
	fmt.Fprintf(&b, "%s \"$@\"\n", fn)
	return b.String(), nil
}

func alternatives(names []string) string {
	if len(names) == 0 {
		return "__none__"
	}
	return strings.Join(names, "|")
}

func caseLabel(verb string) string {
	if verb == "" {
		return `""`
	}
	return verb
}

func flagWords(flags []cli.Flag) []string {
	var out []string
	for _, f := range flags {
		for _, n := range f.Names() {
			if len(n) == 1 {
				out = append(out, "-"+n)
			} else {
				out = append(out, "--"+n)
			}
		}
	}
	return out
}

// Verbs are the visible verbs of app (completion included).
func Verbs(app App) []string {
	a := prepare(app, &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard,
		Getenv: func(string) string { return "" }, Environ: func() []string { return nil }})
	var out []string
	for _, c := range a.VisibleCommands() {
		out = append(out, c.Name)
	}
	return out
}
