package modeltest

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"
)

// writeFault answers a model request with f, shaped as protocol's API
// shapes its errors: 401 for bad credentials, 429 with the reset headers
// each vendor sends.
func (s *Server) writeFault(w http.ResponseWriter, protocol string, f Fault) {
	secs := int(math.Ceil(f.ResetIn.Seconds()))
	reset := time.Now().Add(f.ResetIn).UTC()
	h := w.Header()
	h.Set("Content-Type", "application/json")
	var body any
	switch protocol {
	case Anthropic:
		typ, msg := "authentication_error", "invalid x-api-key"
		if f.Status == http.StatusTooManyRequests {
			typ, msg = "rate_limit_error", "This request would exceed your account's rate limit. Please try again later."
			h.Set("retry-after", strconv.Itoa(secs))
			for _, k := range []string{"requests", "tokens", "input-tokens", "output-tokens"} {
				h.Set("anthropic-ratelimit-"+k+"-reset", reset.Format(time.RFC3339))
			}
			h.Set("anthropic-ratelimit-requests-remaining", "0")
		}
		body = map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}}
	case OpenAI:
		e := map[string]any{"type": "invalid_request_error", "code": "invalid_api_key",
			"message": "Incorrect API key provided: modeltes*****. You can find your API key at https://platform.openai.com/account/api-keys."}
		if f.Status == http.StatusTooManyRequests {
			h.Set("retry-after", strconv.Itoa(secs))
			h.Set("x-ratelimit-reset-requests", fmt.Sprintf("%ds", secs))
			h.Set("x-ratelimit-reset-tokens", fmt.Sprintf("%ds", secs))
			h.Set("x-ratelimit-remaining-requests", "0")
			e = map[string]any{"type": "rate_limit_exceeded", "code": "rate_limit_exceeded",
				"message": fmt.Sprintf("Rate limit reached for requests. Please try again in %ds.", secs)}
			if f.Usage {
				e = map[string]any{"type": "usage_limit_reached", "message": "The usage limit has been reached",
					"plan_type": "plus", "resets_at": reset.Unix(), "resets_in_seconds": secs}
			}
		}
		body = map[string]any{"error": e}
	default: // Gemini
		e := map[string]any{"code": 401, "status": "UNAUTHENTICATED",
			"message": "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential."}
		if f.Status == http.StatusTooManyRequests {
			h.Set("retry-after", strconv.Itoa(secs))
			e = map[string]any{"code": 429, "status": "RESOURCE_EXHAUSTED",
				"message": "Resource has been exhausted (e.g. check quota).",
				"details": []any{map[string]any{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": fmt.Sprintf("%ds", secs)}}}
		}
		body = map[string]any{"error": e}
	}
	w.WriteHeader(f.Status)
	json.NewEncoder(w).Encode(body)
}
