package runstream

import (
	"encoding/json"
	"fmt"
	"time"
)

// claude -p --output-format stream-json --verbose (Claude Code 2.1.197):
// system/init carries the session; system/api_retry each retry of a failed
// request (its HTTP status, claude's error name, the delay); assistant and
// user the conversation; rate_limit_event a subscription's limit; result
// the run's end, with is_error, the total usage and total_cost_usd.

type claudeUsage struct {
	Input      int64 `json:"input_tokens"`
	Output     int64 `json:"output_tokens"`
	CacheRead  int64 `json:"cache_read_input_tokens"`
	CacheWrite int64 `json:"cache_creation_input_tokens"`
}

func (u claudeUsage) tokens() Tokens { return Tokens{u.Input, u.Output, u.CacheRead, u.CacheWrite} }

type claudeBlock struct {
	Type    string          `json:"type"`
	Text    string          `json:"text"`
	Name    string          `json:"name"`
	Input   json.RawMessage `json:"input"`
	Content json.RawMessage `json:"content"`
}

type claudeEvent struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	SessionID string `json:"session_id"`
	// api_retry
	Attempt     int     `json:"attempt"`
	MaxRetries  int     `json:"max_retries"`
	RetryDelay  float64 `json:"retry_delay_ms"`
	ErrorStatus int     `json:"error_status"`
	Error       string  `json:"error"`
	// assistant, user
	Message struct {
		ID      string          `json:"id"`
		Model   string          `json:"model"`
		Content json.RawMessage `json:"content"`
		Usage   *claudeUsage    `json:"usage"`
	} `json:"message"`
	// rate_limit_event
	RateLimit struct {
		Status   string  `json:"status"`
		ResetsAt float64 `json:"resetsAt"`
		Type     string  `json:"rateLimitType"`
		// IsUsingOverage: the limit is passed but the account's extra
		// usage answers (status stays "rejected").
		IsUsingOverage bool `json:"isUsingOverage"`
	} `json:"rate_limit_info"`
	// result
	IsError        bool         `json:"is_error"`
	Result         string       `json:"result"`
	APIErrorStatus int          `json:"api_error_status"`
	Cost           *float64     `json:"total_cost_usd"`
	Usage          *claudeUsage `json:"usage"`
	Errors         []string     `json:"errors"`
}

func (r *Reader) claude(line []byte) ([]string, error) {
	var ev claudeEvent
	if err := json.Unmarshal(line, &ev); err != nil {
		return nil, err
	}
	if ev.SessionID != "" {
		r.session(ev.SessionID)
	}
	switch ev.Type {
	case "system":
		switch ev.Subtype {
		case "init":
			return []string{r.session(ev.SessionID)}, nil
		case "api_retry":
			detail := fmt.Sprintf("API error %d %s (attempt %d of %d)", ev.ErrorStatus, ev.Error, ev.Attempt, ev.MaxRetries)
			r.classify(ev.ErrorStatus, fmt.Sprintf("API error %d %s", ev.ErrorStatus, ev.Error))
			if r.Failure.End == EndRateLimited && ev.RetryDelay > 0 {
				t := r.now().Add(time.Duration(ev.RetryDelay * float64(time.Millisecond)))
				r.Failure.ResetsAt = &t
			}
			return []string{detail + ", retrying in " + time.Duration(ev.RetryDelay*float64(time.Millisecond)).Round(time.Second).String()}, nil
		}
	case "rate_limit_event":
		if ev.RateLimit.Status == "rejected" && ev.RateLimit.IsUsingOverage {
			return []string{"usage limit reached (" + ev.RateLimit.Type + "), using extra usage"}, nil
		}
		if ev.RateLimit.Status == "rejected" {
			r.fail(EndUsageLimit, "usage limit reached ("+ev.RateLimit.Type+")", unixTime(ev.RateLimit.ResetsAt))
			return []string{r.Failure.Detail}, nil
		}
	case "assistant":
		if ev.Message.Usage != nil && ev.Message.ID != "" {
			// One event per content block, each with its message's usage:
			// a message counts once, with its latest usage.
			old := r.messages[ev.Message.ID]
			u := ev.Message.Usage.tokens()
			r.messages[ev.Message.ID] = u
			r.Tokens = r.Tokens.Add(u).Add(Tokens{-old.Input, -old.Output, -old.CacheRead, -old.CacheWrite})
		}
		// claude reports an API error it gave up on as a message of its
		// own ("<synthetic>"), which is no answer of the model's.
		if ev.Message.Model != "<synthetic>" {
			r.succeeded()
		}
		return claudeBlocks(ev.Message.Content), nil
	case "user":
		return claudeBlocks(ev.Message.Content), nil
	case "result":
		if ev.Usage != nil {
			r.Tokens = ev.Usage.tokens()
		}
		if ev.Cost != nil {
			c := *ev.Cost
			r.CostUSD = &c
		}
		if !ev.IsError && ev.Subtype == "success" {
			r.succeeded()
			return nil, nil
		}
		msg := ev.Result
		if msg == "" && len(ev.Errors) > 0 {
			msg = ev.Errors[0]
		}
		if msg == "" {
			msg = ev.Subtype
		}
		if r.Failure == nil || !r.Failure.Fatal() {
			prev := r.Failure
			r.classify(ev.APIErrorStatus, msg)
			// A rate limit retried to the end keeps its reset time.
			if prev != nil && prev.End == r.Failure.End && r.Failure.ResetsAt == nil {
				r.Failure.ResetsAt = prev.ResetsAt
			}
		}
		return []string{"error: " + oneLine(msg)}, nil
	}
	return nil, nil
}

// claudeBlocks renders a message's content: texts, tool calls (a shell
// command as "$ command"), tool results.
func claudeBlocks(content json.RawMessage) []string {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return splitLines(s)
	}
	var blocks []claudeBlock
	json.Unmarshal(content, &blocks)
	var out []string
	for _, b := range blocks {
		switch b.Type {
		case "text":
			out = append(out, splitLines(b.Text)...)
		case "tool_use":
			var in struct {
				Command string `json:"command"`
			}
			json.Unmarshal(b.Input, &in)
			if in.Command != "" {
				out = append(out, command(in.Command)...)
			} else {
				out = append(out, "["+b.Name+" "+string(b.Input)+"]")
			}
		case "tool_result":
			out = append(out, splitLines(blockText(b.Content))...)
		}
	}
	return out
}

// blockText is a tool result's text: a string or a list of text blocks.
func blockText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []claudeBlock
	json.Unmarshal(raw, &blocks)
	out := ""
	for _, b := range blocks {
		if b.Type == "text" {
			out += b.Text + "\n"
		}
	}
	return out
}
