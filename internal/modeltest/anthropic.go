package modeltest

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// The Anthropic Messages API (claude; opencode's anthropic provider).

type anthropicRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

type anthropicBlock struct {
	Type    string `json:"type"`
	Text    string `json:"text"`
	Content any    `json:"content"`
}

// anthropicConversation reduces a Messages request.
func (s *Server) anthropicConversation(req anthropicRequest) Conversation {
	c := Conversation{Protocol: Anthropic}
	for _, t := range req.Tools {
		if isShell(t.Name) && c.Shell == "" {
			c.Shell = t.Name
		}
	}
	var texts []string
	for i, m := range req.Messages {
		var blocks []anthropicBlock
		var str string
		if json.Unmarshal(m.Content, &str) == nil {
			blocks = []anthropicBlock{{Type: "text", Text: str}}
		} else {
			json.Unmarshal(m.Content, &blocks)
		}
		for _, b := range blocks {
			switch {
			case b.Type == "text" && m.Role == "user":
				texts = append(texts, b.Text)
				c.user(b.Text)
				if i == len(req.Messages)-1 {
					c.Last += b.Text + "\n"
				}
			case b.Type == "tool_result":
				c.Results = append(c.Results, resultText(b.Content))
			}
		}
	}
	c.Briefing = s.pickBriefing(texts)
	return c
}

func (s *Server) anthropic(w http.ResponseWriter, r *http.Request, body []byte, e *Request) (*Turn, error) {
	var req anthropicRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("bad messages request: %v", err)
	}
	c := s.anthropicConversation(req)
	e.Conversation = c
	turn := Turn{Text: "OK"}
	ran := false
	if c.Shell != "" {
		turn, ran = s.next(c), true
	}
	id := fmt.Sprintf("msg_%d", len(s.Requests())+1)
	var block map[string]any
	stop := "end_turn"
	if turn.Command != "" {
		stop = "tool_use"
		block = map[string]any{"type": "tool_use", "id": "toolu_" + id, "name": c.Shell,
			"input": map[string]any{"command": turn.Command, "description": "Run a teamkit command"}}
	} else {
		block = map[string]any{"type": "text", "text": turn.Text}
	}
	u, _ := s.current()
	e.Usage = u
	usage := map[string]any{"input_tokens": u.Input, "output_tokens": u.Output, "cache_creation_input_tokens": u.CacheWrite, "cache_read_input_tokens": u.CacheRead}
	msg := map[string]any{"id": id, "type": "message", "role": "assistant", "model": req.Model,
		"content": []any{block}, "stop_reason": stop, "stop_sequence": nil, "usage": usage}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(msg)
	} else {
		startSSE(w)
		start := map[string]any{}
		for k, v := range msg {
			start[k] = v
		}
		start["content"], start["stop_reason"] = []any{}, nil
		sse(w, "message_start", map[string]any{"type": "message_start", "message": start})
		if turn.Command != "" {
			input, _ := json.Marshal(block["input"])
			empty := map[string]any{"type": "tool_use", "id": block["id"], "name": block["name"], "input": map[string]any{}}
			sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": empty})
			sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": string(input)}})
		} else {
			sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 0,
				"content_block": map[string]any{"type": "text", "text": ""}})
			sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
				"delta": map[string]any{"type": "text_delta", "text": turn.Text}})
		}
		sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
		sse(w, "message_delta", map[string]any{"type": "message_delta",
			"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": u.Output}})
		sse(w, "message_stop", map[string]any{"type": "message_stop"})
	}
	if !ran {
		return nil, nil
	}
	return &turn, nil
}

func countTokensAnthropic(w http.ResponseWriter, r *http.Request, body []byte, e *Request) (*Turn, error) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"input_tokens":%d}`, max(1, len(body)/4))
	return nil, nil
}
