package command

import (
	"fmt"
	"io"
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

// Completion is the completion script of a for shell. Every Tab asks the
// command itself (CompleteFlag) for the next words — verbs, flags, and the
// teams, agents and types it reads from the mailbox and the types path —
// so the script stays the same while the mailbox changes.
func Completion(a *cli.App, shell string) (string, error) {
	fn := "_teamkit_" + a.Name
	var b strings.Builder
	switch shell {
	case "fish":
		// Not urfave/cli's static fish script: its verbs are offered where
		// the implied verb takes a name (inbox myteam <TAB>), and its flags
		// of the implied verb never. The command knows; files when it
		// offers nothing, as bash's -o default and zsh's _files.
		fmt.Fprintf(&b, "# fish completion for %s (teamkit), generated from its command definitions by `make docs`.\n", a.Name)
		fmt.Fprintf(&b, "# Install: copy to ~/.config/fish/completions/%s.fish\n", a.Name)
		fmt.Fprintf(&b, "function __fish%s\n", fn)
		b.WriteString("    set -l cur (commandline -ct)\n")
		fmt.Fprintf(&b, "    set -l words (%s (commandline -opc)[2..-1] \"$cur\" %s 2>/dev/null)\n", a.Name, CompleteFlag)
		b.WriteString("    if set -q words[1]\n        printf '%s\\n' $words\n    else\n        __fish_complete_path \"$cur\"\n    end\nend\n")
		fmt.Fprintf(&b, "complete -c %s -f -a '(__fish%s)'\n", a.Name, fn)
		return b.String(), nil
	case "bash":
		fmt.Fprintf(&b, "# bash completion for %s (teamkit), generated from its command definitions by `make docs`.\n", a.Name)
		fmt.Fprintf(&b, "# Install: copy to ~/.local/share/bash-completion/completions/%s, or source it from ~/.bashrc.\n", a.Name)
		fmt.Fprintf(&b, "%s() {\n", fn)
		b.WriteString("\tlocal cur=${COMP_WORDS[COMP_CWORD]} words\n")
		fmt.Fprintf(&b, "\twords=$(\"${COMP_WORDS[0]}\" \"${COMP_WORDS[@]:1:COMP_CWORD}\" %s 2>/dev/null)\n", CompleteFlag)
		b.WriteString("\tCOMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n}\n")
		fmt.Fprintf(&b, "complete -o default -F %s %s\n", fn, a.Name)
		return b.String(), nil
	case "zsh":
		fmt.Fprintf(&b, "#compdef %s\n", a.Name)
		fmt.Fprintf(&b, "# zsh completion for %s (teamkit), generated from its command definitions by `make docs`.\n", a.Name)
		fmt.Fprintf(&b, "# Install: copy to a directory on $fpath as _%s, then run compinit.\n", a.Name)
		fmt.Fprintf(&b, "%s() {\n", fn)
		b.WriteString("\tlocal -a opts\n")
		fmt.Fprintf(&b, "\topts=(${(f)\"$(\"${words[1]}\" \"${(@)words[2,CURRENT-1]}\" \"$PREFIX\" %s 2>/dev/null)\"})\n", CompleteFlag)
		b.WriteString("\tif (( ${#opts} )); then\n\t\tcompadd -a opts\n\telse\n\t\t_files\n\tfi\n}\n")
		fmt.Fprintf(&b, "%s \"$@\"\n", fn)
		return b.String(), nil
	}
	return "", Usagef("unknown shell %q (want %s)", shell, strings.Join(Shells, ", "))
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
