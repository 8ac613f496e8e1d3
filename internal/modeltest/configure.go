package modeltest

import (
	"os"
	"path/filepath"
)

// Key is the API key the CLIs are given; the server accepts any.
const Key = "modeltest-key"

// Configure points claude, codex, gemini and opencode at the server, with
// the least each needs to run headless, for a user whose home is home and
// whose XDG_CONFIG_HOME is configHome: it writes their config files there
// and returns the environment (KEY=VALUE) to add.
//
//   - claude: ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY.
//   - codex: $CODEX_HOME/config.toml with a model provider whose base_url is
//     the server (wire_api "responses") and whose key is in
//     OPENAI_API_KEY.
//   - gemini: GOOGLE_GEMINI_BASE_URL, GEMINI_API_KEY, and a settings.json
//     selecting api-key auth (the base URL alone selects another and exits 41).
//   - opencode: opencode.json with the anthropic provider's baseURL, a model
//     and no autoupdate; OPENCODE_DISABLE_MODELS_FETCH.
//
// Telemetry, update checks and error reports are switched off, and a proxy
// on 127.0.0.1's discard port makes anything else a CLI tries to reach fail
// at once.
func (s *Server) Configure(home, configHome string) ([]string, error) {
	files := map[string]string{
		filepath.Join(home, ".codex", "config.toml"): `model = "modeltest"
model_provider = "modeltest"

[model_providers.modeltest]
name = "modeltest"
base_url = "` + s.URL() + `/v1"
wire_api = "responses"
env_key = "OPENAI_API_KEY"
`,
		filepath.Join(home, ".gemini", "settings.json"): `{"security": {"auth": {"selectedType": "gemini-api-key"}},
 "privacy": {"usageStatisticsEnabled": false}, "telemetry": {"enabled": false},
 "general": {"disableAutoUpdate": true, "disableUpdateNag": true}}
`,
		filepath.Join(configHome, "opencode", "opencode.json"): `{"$schema": "https://opencode.ai/config.json", "autoupdate": false, "share": "disabled",
 "model": "anthropic/claude-sonnet-4-5",
 "provider": {"anthropic": {"options": {"baseURL": "` + s.URL() + `/v1"}}}}
`,
	}
	for path, text := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			return nil, err
		}
	}
	return []string{
		"ANTHROPIC_BASE_URL=" + s.URL(), "ANTHROPIC_API_KEY=" + Key,
		"DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"CODEX_HOME=" + filepath.Join(home, ".codex"), "OPENAI_API_KEY=" + Key,
		"GEMINI_API_KEY=" + Key, "GOOGLE_GEMINI_BASE_URL=" + s.URL(),
		"OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_AUTOUPDATE=1",
		"HTTPS_PROXY=http://127.0.0.1:9", "HTTP_PROXY=http://127.0.0.1:9", "ALL_PROXY=http://127.0.0.1:9",
		"NO_PROXY=127.0.0.1,localhost",
	}, nil
}
