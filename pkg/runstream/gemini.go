package runstream

import (
	"encoding/json"
	"fmt"
	"strings"
)

// gemini -o stream-json (Gemini CLI 0.61.0): init carries the session;
// message the conversation (the assistant's text in pieces, "delta": true);
// tool_use and tool_result the tools; error a non-fatal error; result the
// run's end, with status and stats: input (not cached), cached,
// output_tokens, over every model request of the run.

type geminiEvent struct {
	Type       string `json:"type"`
	SessionID  string `json:"session_id"`
	Role       string `json:"role"`
	Content    string `json:"content"`
	Delta      bool   `json:"delta"`
	ToolName   string `json:"tool_name"`
	Parameters struct {
		Command string `json:"command"`
	} `json:"parameters"`
	Status   string `json:"status"`
	Output   string `json:"output"`
	Message  string `json:"message"`
	Severity string `json:"severity"`
	Error    struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
	Stats struct {
		Total  int64 `json:"total_tokens"`
		Prompt int64 `json:"input_tokens"`
		Input  int64 `json:"input"`
		Cached int64 `json:"cached"`
		Output int64 `json:"output_tokens"`
	} `json:"stats"`
}

// apiError reads gemini's "[API Error: {"error":{"code":401,…}}]" as its
// status and "API error 401 UNAUTHENTICATED: <message>", and the text of an
// error gemini gave up retrying ("[API Error: Resource has been exhausted
// (e.g. check quota).\nSuggested retry after 20s.]\nPlease wait…", after
// minutes of a 429) as "API error: <text>"; any other text is returned as
// it is.
func apiError(s string) (int, string) {
	inner, ok := strings.CutPrefix(s, "[API Error: ")
	if !ok {
		return 0, s
	}
	if !strings.HasPrefix(inner, "{") {
		return 0, "API error: " + inner
	}
	var e struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Status  string `json:"status"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(strings.TrimSuffix(inner, "]")), &e) != nil || e.Error.Message == "" {
		return 0, s
	}
	return e.Error.Code, fmt.Sprintf("API error %d %s: %s", e.Error.Code, e.Error.Status, e.Error.Message)
}

func (r *Reader) gemini(line []byte) ([]string, error) {
	var ev geminiEvent
	if err := json.Unmarshal(line, &ev); err != nil {
		return nil, err
	}
	var out []string
	if ev.Type == "message" && ev.Role == "assistant" {
		r.partial.WriteString(ev.Content)
		r.succeeded()
		// Whole lines go out as they complete.
		s := r.partial.String()
		if i := strings.LastIndexByte(s, '\n'); i >= 0 {
			r.partial.Reset()
			r.partial.WriteString(s[i+1:])
			out = splitLines(s[:i])
		}
		return out, nil
	}
	out = r.Flush()
	switch ev.Type {
	case "init":
		out = append(out, r.session(ev.SessionID))
	case "tool_use":
		if ev.Parameters.Command != "" {
			out = append(out, command(ev.Parameters.Command)...)
		} else {
			out = append(out, "["+ev.ToolName+"]")
		}
	case "tool_result":
		out = append(out, splitLines(ev.Output)...)
		if ev.Error.Message != "" {
			out = append(out, "tool error: "+oneLine(ev.Error.Message))
		}
	case "error":
		out = append(out, ev.Severity+": "+oneLine(ev.Message))
	case "result":
		// output_tokens is the candidates' alone: the model's thoughts
		// are in total_tokens only (beside the prompt and candidates), and
		// are output as claude's and codex's output counts them.
		st := ev.Stats
		thoughts := max(0, st.Total-st.Prompt-st.Output)
		r.Tokens = r.Tokens.Add(Tokens{Input: st.Input, Output: st.Output + thoughts, CacheRead: st.Cached})
		if ev.Status == "success" {
			r.succeeded()
		} else {
			status, msg := apiError(ev.Error.Message)
			if msg == "" {
				msg = ev.Status
			}
			r.classify(status, msg)
			out = append(out, "error: "+oneLine(msg))
		}
	}
	return out, nil
}
