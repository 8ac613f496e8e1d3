package inbox

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/teamkit/teamkit/internal/atomicfile"
	"github.com/teamkit/teamkit/internal/command"
	"github.com/teamkit/teamkit/pkg/mailbox"
)

// StopHookVerb is the hidden verb an agent CLI's Stop hook runs (spawn
// writes it into the run's settings; a person never types it).
const StopHookVerb = "__stop-hook"

// maxHookInput bounds what the hook reads of the CLI's JSON on stdin.
const maxHookInput = 1 << 20

func stopHookCommand(env *command.Env) *cli.Command {
	return &cli.Command{
		Name:   StopHookVerb,
		Hidden: true,
		Usage:  "claude's Stop hook: keep the run going while <name> has unread mail",
		UsageText: "inbox " + StopHookVerb + " <team> <name> --state FILE [--max N] [--inbox PATH]   " +
			"(reads the hook's JSON on stdin)",
		Description: "Prints {\"decision\":\"block\",\"reason\":…} when <name> has unread mail, fewer than --max\n" +
			"stops of this run were blocked (counted in --state), and the mail is not what the last block\n" +
			"already announced; else prints nothing, so the agent stops. Any failure lets it stop too.",
		Flags: command.Common(
			&cli.StringFlag{Name: "state", Usage: "the run's `FILE` counting the stops blocked (required)"},
			&cli.IntFlag{Name: "max", Value: 5, Usage: "block at most `N` stops of one run"},
			&cli.StringFlag{Name: "inbox", Value: "inbox", Usage: "the inbox command as the briefing spells it (`PATH`), for the reason"},
		),
		Action: func(c *cli.Context) error {
			o, err := parseStopHook(c, env)
			if err != nil {
				return err
			}
			return command.WithMailbox(c, env, o.run)
		},
	}
}

// stopHookOptions is one run of the Stop hook, parsed and checked.
type stopHookOptions struct {
	Team, Name string
	State      string
	Max        int
	Inbox      string
	// Active is the hook input's stop_hook_active: this stop follows a
	// turn that a Stop hook kept going.
	Active bool
}

func parseStopHook(c *cli.Context, env *command.Env) (*stopHookOptions, error) {
	team, name, rest, err := command.Identity(env, c.Args().Slice(), 2)
	if err != nil {
		return nil, err
	}
	if len(rest) > 0 {
		return nil, command.Usagef("unexpected argument %q (usage: inbox %s <team> <name> --state FILE)", rest[0], StopHookVerb)
	}
	o := &stopHookOptions{Team: team, Name: name, State: c.String("state"), Max: c.Int("max"), Inbox: c.String("inbox")}
	if o.State == "" || !filepath.IsAbs(o.State) {
		return nil, command.Usagef("--state %q: want the absolute path of the run's hook state file", o.State)
	}
	if o.Max < 1 {
		return nil, command.Usagef("--max %d: want 1 or more", o.Max)
	}
	// The CLI's input matters only for stop_hook_active; input that is
	// missing or not JSON (run by hand) reads as a first stop.
	if !env.StdinTTY {
		var in struct {
			StopHookActive bool `json:"stop_hook_active"`
		}
		data, _ := io.ReadAll(io.LimitReader(env.Stdin, maxHookInput))
		if json.Unmarshal(data, &in) == nil {
			o.Active = in.StopHookActive
		}
	}
	return o, nil
}

// hookState is what one run's hook remembers between stops: how many it
// blocked, and the newest message the last block announced.
type hookState struct {
	Blocks int
	Seen   int64
}

func readHookState(path string) (hookState, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return hookState{}, nil
	}
	if err != nil {
		return hookState{}, err
	}
	var s hookState
	f := strings.Fields(string(data))
	if len(f) != 2 {
		return hookState{}, fmt.Errorf("hook state %s: want two numbers", path)
	}
	if s.Blocks, err = strconv.Atoi(f[0]); err == nil {
		s.Seen, err = strconv.ParseInt(f[1], 10, 64)
	}
	if err != nil {
		return hookState{}, fmt.Errorf("hook state %s: %w", path, err)
	}
	return s, nil
}

// run blocks the stop while mail waits, within the run's budget. It must
// never keep a run going for nothing: it blocks only on unread mail, at most
// Max times a run, and not again for mail a block already announced that
// the model left unread (stop_hook_active: it was told and stopped anyway;
// wake, not this run, will deliver it). Every error reaches the CLI as a
// failed hook (exit 1, one line on stderr), which lets the stop happen.
func (o *stopHookOptions) run(ctx context.Context, env *command.Env, db *mailbox.DB) error {
	st, err := readHookState(o.State)
	if err != nil {
		return err
	}
	n, newest, err := db.UnreadOf(ctx, o.Team, o.Name)
	if err != nil || n == 0 {
		return err
	}
	switch {
	case st.Blocks >= o.Max:
		fmt.Fprintf(env.Stderr, "inbox: note: %d unread message(s) for %s, but this run's stop was blocked %d times already (stop_hook_max); letting it stop\n", n, o.Name, st.Blocks)
		return nil
	case o.Active && newest <= st.Seen:
		fmt.Fprintf(env.Stderr, "inbox: note: %d unread message(s) for %s were announced at the last stop and left unread; letting it stop\n", n, o.Name)
		return nil
	}
	// The block is counted before it is answered: a hook that dies between
	// the two has used a block, never granted one uncounted.
	st.Blocks++
	st.Seen = newest
	// Whole or not at all: a torn state file would fail every later hook
	// of the run, which would then never block again.
	if err := atomicfile.Write(o.State, []byte(fmt.Sprintf("%d %d\n", st.Blocks, st.Seen)), 0o600); err != nil {
		return fmt.Errorf("record the hook's block: %w", err)
	}
	reason := fmt.Sprintf("New teamkit mail: %d unread message(s) for %s arrived while you worked. "+
		"Run `%s` now to read them, act on them as your briefing says, then finish.", n, o.Name, o.Inbox)
	return json.NewEncoder(env.Stdout).Encode(map[string]string{"decision": "block", "reason": reason})
}
