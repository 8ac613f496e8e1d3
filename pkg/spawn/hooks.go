package spawn

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"

	"github.com/teamkit/teamkit/pkg/agenttype"
	"github.com/teamkit/teamkit/pkg/briefing"
)

// stopHookVerb is inbox's hidden verb for the Stop hook, spelt again here
// because pkg/ never imports a command (internal/cmd/inbox StopHookVerb);
// testdata/agents/claude_stophook.txtar fails if the two drift apart.
const stopHookVerb = "__stop-hook"

// stopHookArgs writes the run's hook settings, for a type with a stop hook,
// and returns what goes right after the agent's program to load them (nil
// for a type without one). For claude that is `--settings <base>.settings.json`,
// a Stop hook in exec form — the program and its arguments, no shell — that
// runs `inbox __stop-hook` as the briefing spells inbox; it keeps its count
// of blocks in <base>.stop-hook, beside the run's other files.
func stopHookArgs(conf agenttype.Conf, base string, cmds briefing.Commands, team, name string) ([]string, error) {
	if conf.StopHook != agenttype.StopHookClaude {
		return nil, nil
	}
	hook := map[string]any{
		"type":    "command",
		"command": cmds.Inbox,
		"args": []string{stopHookVerb, "--state", base + ".stop-hook", "--max", strconv.Itoa(conf.StopHookMax),
			"--inbox", cmds.Inbox, "--", team, name},
		// Two mailbox reads; a stuck database must not hold the agent's stop.
		"timeout": 30,
	}
	settings := map[string]any{"hooks": map[string]any{"Stop": []any{map[string]any{"hooks": []any{hook}}}}}
	data, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		return nil, err
	}
	file := base + ".settings.json"
	if err := os.WriteFile(file, append(data, '\n'), 0o600); err != nil {
		return nil, fmt.Errorf("write the run's hook settings: %w", err)
	}
	return []string{"--settings", file}, nil
}
