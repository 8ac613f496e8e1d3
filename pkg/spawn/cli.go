package spawn

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/teamkit/teamkit/pkg/agenttype"
	"github.com/teamkit/teamkit/pkg/launch"
)

// AgentCLIsDir is where `make agent-clis` installs the agent CLIs the
// built-in types are tested with: $XDG_CACHE_HOME/teamkit/agent-clis (or
// ~/.cache/…, the home agenttype.Home's), their executables in
// node_modules/.bin. "" when env has neither an absolute XDG_CACHE_HOME nor
// a home.
func AgentCLIsDir(env []string) string {
	vars := envMap(env)
	cache := vars["XDG_CACHE_HOME"]
	if !filepath.IsAbs(cache) {
		home := agenttype.Home(func(k string) string { return vars[k] })
		if home == "" {
			return ""
		}
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "teamkit", "agent-clis", "node_modules", ".bin")
}

// CLINotFoundError is a type whose program is neither on the agent's PATH
// nor in the agent-clis cache.
type CLINotFoundError struct {
	Type, CLI string
	// Cache is AgentCLIsDir, "" if there is none.
	Cache string
	// Install is the type's install line, "" if it has none.
	Install string
}

func (e *CLINotFoundError) Error() string {
	where := "on the agent's PATH"
	if e.Cache != "" {
		where += " or in " + e.Cache
	}
	return fmt.Sprintf("type %s: command %q not found %s", e.Type, e.CLI, where)
}

// Hint names both places spawn looks; the cache holds only the CLIs of the
// built-in types that npm installs (grok's is not on npm).
func (e *CLINotFoundError) Hint() string {
	if e.Install == "" {
		return "install " + e.CLI + " so that it is on PATH, or name it by its full path in the type's command"
	}
	hint := "install " + e.CLI + " (" + e.Install + ") so that it is on PATH"
	if e.Cache != "" && strings.HasPrefix(e.Install, "npm install") {
		hint += ", or run `make agent-clis` in the teamkit checkout, which puts the pinned CLIs in " + e.Cache
	}
	return hint
}

// ResolveCLI finds the program argv0 of type typeName for an agent with
// environment env: on its PATH, else (a bare name only) in AgentCLIsDir.
// The result is the path to start.
func ResolveCLI(typeName, argv0, install string, env []string) (string, error) {
	p, err := launch.LookPath(argv0, env)
	if err == nil || filepath.Base(argv0) != argv0 {
		if err != nil {
			return "", fmt.Errorf("type %s: %w", typeName, err)
		}
		return p, nil
	}
	cache := AgentCLIsDir(env)
	if cache != "" {
		if p, err := launch.LookPath(filepath.Join(cache, argv0), env); err == nil {
			return p, nil
		}
	}
	return "", &CLINotFoundError{Type: typeName, CLI: argv0, Cache: cache, Install: install}
}
