package modeltest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// The Gemini API, generateContent and streamGenerateContent?alt=sse
// (gemini).

type geminiPart struct {
	Text             string `json:"text"`
	Thought          bool   `json:"thought"`
	FunctionResponse *struct {
		Name     string `json:"name"`
		Response any    `json:"response"`
	} `json:"functionResponse"`
}

type geminiRequest struct {
	Contents []struct {
		Role  string       `json:"role"`
		Parts []geminiPart `json:"parts"`
	} `json:"contents"`
	Tools []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	GenerationConfig struct {
		ResponseMimeType   string `json:"responseMimeType"`
		ResponseSchema     any    `json:"responseSchema"`
		ResponseJSONSchema any    `json:"responseJsonSchema"`
	} `json:"generationConfig"`
}

func (s *Server) gemini(w http.ResponseWriter, r *http.Request, body []byte, e *Request) (*Turn, error) {
	var req geminiRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("bad generateContent request: %v", err)
	}
	c := Conversation{Protocol: Gemini}
	for _, t := range req.Tools {
		for _, f := range t.FunctionDeclarations {
			if isShell(f.Name) && c.Shell == "" {
				c.Shell = f.Name
			}
		}
	}
	var texts []string
	for _, m := range req.Contents {
		for _, p := range m.Parts {
			switch {
			case p.FunctionResponse != nil:
				c.Results = append(c.Results, resultText(p.FunctionResponse.Response))
			case m.Role == "user" && p.Text != "" && !p.Thought:
				texts = append(texts, p.Text)
				c.user(p.Text)
			}
		}
	}
	c.Briefing = s.pickBriefing(texts)
	e.Conversation = c

	var part map[string]any
	var turn *Turn
	switch {
	case c.Shell != "":
		t := s.next(c)
		turn = &t
		if t.Command != "" {
			part = map[string]any{"functionCall": map[string]any{"name": c.Shell,
				"args": map[string]any{"command": t.Command, "description": "Run a teamkit command"}}}
		} else {
			part = map[string]any{"text": t.Text}
		}
	case strings.Contains(req.GenerationConfig.ResponseMimeType, "json"):
		// A router, a next-speaker check, a loop check: JSON of the schema.
		schema := req.GenerationConfig.ResponseJSONSchema
		if schema == nil {
			schema = req.GenerationConfig.ResponseSchema
		}
		j, _ := json.Marshal(fill(schema, ""))
		part = map[string]any{"text": string(j)}
	default:
		part = map[string]any{"text": "OK"}
	}
	u, _ := s.current()
	u.CacheWrite = 0
	e.Usage = u
	resp := map[string]any{
		"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}},
			"finishReason": "STOP", "index": 0}},
		// promptTokenCount includes the cached ones; no cache writes.
		"usageMetadata": map[string]any{"promptTokenCount": u.Input + u.CacheRead, "cachedContentTokenCount": u.CacheRead,
			"candidatesTokenCount": u.Output, "totalTokenCount": u.Input + u.CacheRead + u.Output},
		"modelVersion": "modeltest",
	}
	if strings.HasSuffix(r.URL.Path, ":streamGenerateContent") {
		startSSE(w)
		sse(w, "", resp)
	} else {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(resp)
	}
	return turn, nil
}

func countTokensGemini(w http.ResponseWriter, r *http.Request, body []byte, e *Request) (*Turn, error) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"totalTokens":%d}`, max(1, len(body)/4))
	return nil, nil
}

// fill makes a value that satisfies a JSON schema well enough for gemini's
// side requests: the first enum value, the minimum number (else 1), placeholder strings,
// empty arrays, and
// next_speaker "user" so the CLI never asks the model to go on by itself.
func fill(schema any, name string) any {
	m, _ := schema.(map[string]any)
	if m == nil {
		return map[string]any{}
	}
	if name == "next_speaker" {
		return "user"
	}
	if enum, ok := m["enum"].([]any); ok && len(enum) > 0 {
		return enum[0]
	}
	typ, _ := m["type"].(string)
	switch strings.ToLower(typ) {
	case "object":
		out := map[string]any{}
		props, _ := m["properties"].(map[string]any)
		for k, v := range props {
			out[k] = fill(v, k)
		}
		return out
	case "array":
		return []any{}
	case "string":
		return "modeltest"
	case "number", "integer":
		// gemini's router wants a complexity score of at least 1.
		if min, ok := m["minimum"].(float64); ok {
			return min
		}
		return 1
	case "boolean":
		return false
	}
	return map[string]any{}
}
