package modeltest

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// The OpenAI Responses API (codex).

type openaiTool struct {
	Type       string `json:"type"`
	Name       string `json:"name"`
	Parameters struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
	} `json:"parameters"`
}

type openaiRequest struct {
	Model  string            `json:"model"`
	Stream bool              `json:"stream"`
	Input  []json.RawMessage `json:"input"`
	Tools  []openaiTool      `json:"tools"`
}

type openaiItem struct {
	Type    string `json:"type"`
	Role    string `json:"role"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	Output any `json:"output"`
}

// shellArgs are the arguments of a call to tool that runs cmd: codex's
// tools name the command "cmd" (a string) or "command" (a string, or an
// argv for the older shell tool).
func shellArgs(tool openaiTool, cmd string) map[string]any {
	props := tool.Parameters.Properties
	if _, ok := props["cmd"]; ok {
		return map[string]any{"cmd": cmd}
	}
	if p, ok := props["command"]; ok && p.Type == "array" {
		return map[string]any{"command": []string{"bash", "-c", cmd}}
	}
	return map[string]any{"command": cmd}
}

func (s *Server) openai(w http.ResponseWriter, r *http.Request, body []byte, e *Request) (*Turn, error) {
	var req openaiRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("bad responses request: %v", err)
	}
	c := Conversation{Protocol: OpenAI}
	var shell openaiTool
	for _, t := range req.Tools {
		if t.Type == "function" && isShell(t.Name) && c.Shell == "" {
			c.Shell, shell = t.Name, t
		}
	}
	var texts []string
	for _, raw := range req.Input {
		var it openaiItem
		json.Unmarshal(raw, &it)
		switch it.Type {
		case "message", "":
			if it.Role == "user" {
				for _, p := range it.Content {
					if p.Type == "input_text" {
						texts = append(texts, p.Text)
						c.user(p.Text)
					}
				}
			}
		case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
			c.Results = append(c.Results, resultText(it.Output))
		}
	}
	c.Briefing = s.pickBriefing(texts)
	e.Conversation = c
	turn := Turn{Text: "OK"}
	ran := c.Shell != ""
	if ran {
		turn = s.next(c)
	}
	n := len(s.Requests()) + 1
	respID := fmt.Sprintf("resp_%d", n)
	var item map[string]any
	if turn.Command != "" {
		args, _ := json.Marshal(shellArgs(shell, turn.Command))
		item = map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%d", n), "call_id": fmt.Sprintf("call_%d", n),
			"name": c.Shell, "arguments": string(args), "status": "completed"}
	} else {
		item = map[string]any{"type": "message", "id": fmt.Sprintf("msg_%d", n), "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": turn.Text, "annotations": []any{}}}}
	}
	// input_tokens includes the cached ones; the Responses API reports no
	// cache writes.
	u, _ := s.current()
	u.CacheWrite = 0
	e.Usage = u
	usage := map[string]any{"input_tokens": u.Input + u.CacheRead, "input_tokens_details": map[string]any{"cached_tokens": u.CacheRead},
		"output_tokens": u.Output, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": u.Input + u.CacheRead + u.Output}
	resp := map[string]any{"id": respID, "object": "response", "status": "completed", "model": req.Model,
		"output": []any{item}, "usage": usage}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(resp)
	} else {
		startSSE(w)
		sse(w, "response.created", map[string]any{"type": "response.created",
			"response": map[string]any{"id": respID, "object": "response", "status": "in_progress", "model": req.Model, "output": []any{}}})
		sse(w, "response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item})
		sse(w, "response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
		sse(w, "response.completed", map[string]any{"type": "response.completed", "response": resp})
	}
	if !ran {
		return nil, nil
	}
	return &turn, nil
}
