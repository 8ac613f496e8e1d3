package runstream

import (
	"encoding/json"
	"strconv"
	"time"
)

// opencode run --format json (opencode 1.18.33): every event carries the
// sessionID; text and tool_use the conversation; step_finish each model
// step's tokens (input not cached, output, cache read and write) and cost;
// error a failed request, with its HTTP status and response headers.

type opencodeEvent struct {
	Type      string `json:"type"`
	SessionID string `json:"sessionID"`
	Part      struct {
		Text  string `json:"text"`
		Tool  string `json:"tool"`
		State struct {
			Status string `json:"status"`
			Input  struct {
				Command string `json:"command"`
			} `json:"input"`
			Output string `json:"output"`
			Error  string `json:"error"`
		} `json:"state"`
		Tokens struct {
			Input     int64 `json:"input"`
			Output    int64 `json:"output"`
			Reasoning int64 `json:"reasoning"`
			Cache     struct {
				Read  int64 `json:"read"`
				Write int64 `json:"write"`
			} `json:"cache"`
		} `json:"tokens"`
		Cost float64 `json:"cost"`
	} `json:"part"`
	Error struct {
		Name string `json:"name"`
		Data struct {
			Message    string            `json:"message"`
			StatusCode int               `json:"statusCode"`
			Headers    map[string]string `json:"responseHeaders"`
		} `json:"data"`
	} `json:"error"`
}

func (r *Reader) opencode(line []byte) ([]string, error) {
	var ev opencodeEvent
	if err := json.Unmarshal(line, &ev); err != nil {
		return nil, err
	}
	var out []string
	if ev.SessionID != "" && r.named != ev.SessionID {
		r.named = ev.SessionID
		out = append(out, r.session(ev.SessionID))
	}
	p := ev.Part
	switch ev.Type {
	case "text":
		out = append(out, splitLines(p.Text)...)
	case "tool_use":
		if p.State.Input.Command != "" {
			out = append(out, command(p.State.Input.Command)...)
		} else {
			out = append(out, "["+p.Tool+"]")
		}
		out = append(out, splitLines(p.State.Output)...)
		if p.State.Error != "" {
			out = append(out, "tool error: "+oneLine(p.State.Error))
		}
	case "step_finish":
		r.Tokens = r.Tokens.Add(Tokens{Input: p.Tokens.Input, Output: p.Tokens.Output + p.Tokens.Reasoning, CacheRead: p.Tokens.Cache.Read, CacheWrite: p.Tokens.Cache.Write})
		cost := p.Cost
		if r.CostUSD != nil {
			cost += *r.CostUSD
		}
		r.CostUSD = &cost
		r.succeeded()
	case "error":
		d := ev.Error.Data
		msg := d.Message
		if msg == "" {
			msg = ev.Error.Name
		}
		r.classify(d.StatusCode, msg)
		if r.Failure.ResetsAt == nil {
			if s, err := strconv.Atoi(d.Headers["retry-after"]); err == nil && s > 0 {
				t := r.now().Add(time.Duration(s) * time.Second)
				r.Failure.ResetsAt = &t
			}
		}
		out = append(out, "error: "+oneLine(msg))
	}
	return out, nil
}
