package inbox

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/teamkit/teamkit/internal/command"
	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/text"
)

func listCommand(env *command.Env) *cli.Command {
	return &cli.Command{
		Name:      "list",
		Usage:     "list unread messages (all with --all) without marking them",
		ArgsUsage: "<team> [<name>]",
		UsageText: "inbox list <team> [<name>] [--all] [--json]",
		Description: "Streamed from an index: its cost follows what is listed, not the team's history.\n\n" +
			"Examples:\n" +
			"   inbox list myteam            # every unread message of the team\n" +
			"   inbox list myteam w1 --all   # w1's whole history",
		Flags: command.Common(&cli.BoolFlag{Name: "all", Usage: "include messages already read"}),
		Action: func(c *cli.Context) error {
			o, err := parseList(c, env)
			if err != nil {
				return err
			}
			return command.WithMailbox(c, env, o.run)
		},
	}
}

// listOptions is one `inbox list`, parsed and checked.
type listOptions struct {
	Team string
	// To is the one recipient listed, "" for the whole team.
	To   string
	All  bool
	JSON bool
}

func parseList(c *cli.Context, env *command.Env) (*listOptions, error) {
	args := c.Args().Slice()
	if len(args) > 2 {
		return nil, command.Usagef("usage: inbox list <team> [<name>]")
	}
	team, to, _, err := command.Identity(env, args[:min(len(args), 1)], 1)
	if err != nil {
		return nil, err
	}
	if len(args) == 2 {
		to = args[1]
		if err := command.CheckName("agent", to); err != nil {
			return nil, err
		}
	}
	return &listOptions{Team: team, To: to, All: c.Bool("all"), JSON: c.Bool("json")}, nil
}

// run lists the messages as it reads them: one message in memory at a
// time, whatever the history.
func (o *listOptions) run(ctx context.Context, env *command.Env, db *mailbox.DB) error {
	out := bufio.NewWriter(command.Writer(ctx, env.Stdout))
	var table *listTable
	if !o.JSON {
		table = &listTable{w: out, show: env.Show}
	}
	n := 0
	err := db.ListEach(ctx, o.Team, o.To, o.All, func(m mailbox.Message) error {
		n++
		if table == nil {
			return command.JSON(out, m)
		}
		return table.add(m)
	})
	if err != nil {
		// The rows read before the failure, each whole: the buffer may
		// end in the middle of one.
		if table != nil {
			table.flush()
		}
		out.Flush()
		return err
	}
	if table != nil {
		if err := table.flush(); err != nil {
			return err
		}
	}
	if n == 0 {
		command.NoteUnknownTeam(ctx, env, "inbox", db, o.Team)
	}
	return out.Flush()
}

// listTable prints inbox list's table as it streams: the first rows are
// held back to size the columns, then every row is written at once with
// those widths (a longer value later only pushes its own row out).
type listTable struct {
	w       io.Writer
	show    func(string) string
	pending [][]string
	widths  []int
	started bool
}

// listSample is how many rows size the table's columns.
const listSample = 256

func (t *listTable) add(m mailbox.Message) error {
	read := "-"
	if !m.ReadAt.IsZero() {
		read = command.FormatTime(m.ReadAt)
	}
	// Every cell shown as Env.Table shows it: names too, which whoever can
	// write the mailbox can store as any text.
	row := []string{fmt.Sprint(m.ID), command.Cell(t.show(m.From)), command.Cell(t.show(m.To)), command.FormatTime(m.CreatedAt), read, command.Cell(t.show(text.FirstLine(m.Body, 60)))}
	if t.started {
		return t.write(row)
	}
	t.pending = append(t.pending, row)
	if len(t.pending) >= listSample {
		return t.flush()
	}
	return nil
}

func (t *listTable) flush() error {
	if t.started {
		return nil
	}
	t.started = true
	head := []string{"ID", "FROM", "TO", "CREATED", "READ", "FIRST LINE"}
	t.widths = make([]int, len(head))
	for _, r := range append([][]string{head}, t.pending...) {
		for i, v := range r {
			t.widths[i] = max(t.widths[i], text.Width(v))
		}
	}
	for _, r := range append([][]string{head}, t.pending...) {
		if err := t.write(r); err != nil {
			return err
		}
	}
	t.pending = nil
	return nil
}

func (t *listTable) write(row []string) error {
	var b strings.Builder
	for i, v := range row {
		b.WriteString(v)
		if i < len(row)-1 {
			b.WriteString(strings.Repeat(" ", max(t.widths[i]-text.Width(v), 0)+2))
		}
	}
	b.WriteByte('\n')
	_, err := io.WriteString(t.w, b.String())
	return err
}
