package runstream

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sync"
)

// reconnecting is compiled on first use, as the reset patterns are.
var reconnecting = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^Reconnecting\.\.\. \d+/\d+ \((.*)\)$`)
})

// codex exec --json (codex-cli 0.171.0): thread.started carries the session
// (the thread id); item.* the agent's messages and commands; error each
// failed request ("Reconnecting... 2/5 (unexpected status 401 …)") and
// turn.failed the turn's end on an error, after which codex may still exit
// 0; turn.completed the turn's usage, where input_tokens includes the
// cached ones.

type codexEvent struct {
	Type     string `json:"type"`
	ThreadID string `json:"thread_id"`
	Message  string `json:"message"`
	Error    struct {
		Message string `json:"message"`
	} `json:"error"`
	Usage struct {
		Input      int64 `json:"input_tokens"`
		Cached     int64 `json:"cached_input_tokens"`
		CacheWrite int64 `json:"cache_write_input_tokens"`
		Output     int64 `json:"output_tokens"`
	} `json:"usage"`
	Item struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Message  string `json:"message"`
		Command  string `json:"command"`
		Output   string `json:"aggregated_output"`
		ExitCode *int   `json:"exit_code"`
		Changes  []struct {
			Path string `json:"path"`
			Kind string `json:"kind"`
		} `json:"changes"`
	} `json:"item"`
}

func (r *Reader) codex(line []byte) ([]string, error) {
	var ev codexEvent
	if err := json.Unmarshal(line, &ev); err != nil {
		return nil, err
	}
	it := ev.Item
	switch ev.Type {
	case "thread.started":
		return []string{r.session(ev.ThreadID)}, nil
	case "item.started":
		if it.Type == "command_execution" {
			return command(it.Command), nil
		}
	case "item.completed":
		switch it.Type {
		case "agent_message", "reasoning":
			return splitLines(it.Text), nil
		case "command_execution":
			out := splitLines(it.Output)
			if it.ExitCode != nil && *it.ExitCode != 0 {
				out = append(out, fmt.Sprintf("(exit %d)", *it.ExitCode))
			}
			return out, nil
		case "file_change":
			var out []string
			for _, c := range it.Changes {
				out = append(out, c.Kind+" "+c.Path)
			}
			return out, nil
		case "error":
			// A warning of codex's own (unknown model metadata, say): the
			// turn goes on.
			return []string{"warning: " + oneLine(it.Message)}, nil
		}
	case "error":
		// "Reconnecting... 2/5 (<why>)": the why is the reason.
		msg := ev.Message
		if m := reconnecting().FindStringSubmatch(msg); m != nil {
			msg = m[1]
		}
		r.classify(0, msg)
		return []string{"error: " + oneLine(ev.Message)}, nil
	case "turn.failed":
		if r.Failure == nil || !r.Failure.Fatal() {
			prev := r.Failure
			r.classify(0, ev.Error.Message)
			if prev != nil && prev.End == r.Failure.End && r.Failure.ResetsAt == nil {
				r.Failure.ResetsAt = prev.ResetsAt
			}
		}
		return []string{"turn failed: " + oneLine(ev.Error.Message)}, nil
	case "turn.completed":
		u := ev.Usage
		t := Tokens{Input: u.Input - u.Cached, Output: u.Output, CacheRead: u.Cached, CacheWrite: u.CacheWrite}
		// The thread's usage before this run (Base) is counted once, out.
		b := r.Base
		r.Base = Tokens{}
		t = Tokens{max(0, t.Input-b.Input), max(0, t.Output-b.Output), max(0, t.CacheRead-b.CacheRead), max(0, t.CacheWrite-b.CacheWrite)}
		r.Tokens = r.Tokens.Add(t)
		r.succeeded()
	}
	return nil, nil
}
