package spawn

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/teamkit/teamkit/pkg/agenttype"
)

// AuthError is a type whose CLI would start without any of the credentials
// its type.conf names: it would fail on its first request, or worse, fall
// back to something nobody chose, so spawn refuses before launching.
type AuthError struct {
	Type string
	Auth agenttype.Auth
	// Files are the login files looked for, expanded.
	Files []string
}

func (e *AuthError) Error() string {
	var missing []string
	switch len(e.Auth.Env) {
	case 0:
	case 1:
		missing = append(missing, e.Auth.Env[0]+" is not set")
	default:
		missing = append(missing, "none of "+strings.Join(e.Auth.Env, ", ")+" is set")
	}
	if len(e.Files) > 0 {
		missing = append(missing, "no login file ("+strings.Join(e.Files, ", ")+")")
	}
	return fmt.Sprintf("type %s: no credentials for its CLI: %s", e.Type, strings.Join(missing, ", and "))
}

// Hint says what to set or run.
func (e *AuthError) Hint() string {
	return AuthHint(e.Auth) + "; for credentials spawn cannot see (a keychain, another provider), pass --no-auth-check"
}

// AuthHint names the keys and the login of a type's credentials (its
// auth_env and auth_login): what to set or run when its CLI has none, or
// reports the ones it has as refused.
func AuthHint(a agenttype.Auth) string {
	e := &AuthError{Auth: a}
	var ways []string
	if len(e.Auth.Env) > 0 {
		set := "set " + e.Auth.Env[0]
		if len(e.Auth.Env) > 1 {
			set += " (or " + strings.Join(e.Auth.Env[1:], ", ") + ")"
		}
		ways = append(ways, set+" in spawn's environment")
	}
	if e.Auth.Login != "" {
		ways = append(ways, e.Auth.Login)
	}
	return strings.Join(ways, ", or ")
}

// CheckAuth returns an *AuthError unless env (the agent's environment) holds
// one of t's credentials: one of its variables set and non-empty, or one of
// its login files present. A type that names none passes.
func CheckAuth(t *agenttype.Type, env []string) error {
	a := t.Conf.Auth
	if a.Empty() {
		return nil
	}
	vars := envMap(env)
	for _, name := range a.Env {
		if vars[name] != "" {
			return nil
		}
	}
	var files []string
	for _, f := range a.Files {
		path, ok := expandPath(f, vars)
		if !ok {
			continue
		}
		if st, err := os.Stat(path); err == nil && !st.IsDir() {
			return nil
		}
		files = append(files, path)
	}
	return &AuthError{Type: t.Name, Auth: a, Files: files}
}

func envMap(env []string) map[string]string {
	m := make(map[string]string, len(env))
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// expandPath expands a leading ~ to the user's home (agenttype.Home), and
// $VAR, ${VAR} and ${VAR:-default} from vars. It reports false when the path
// names a variable that is unset with no default (or ~ with no home), or is
// not absolute once expanded: such a file is not the CLI's either.
func expandPath(p string, vars map[string]string) (string, bool) {
	ok := true
	expand := func(s string) string {
		return os.Expand(s, func(name string) string {
			name, def, hasDef := strings.Cut(name, ":-")
			if v := vars[name]; v != "" {
				return v
			}
			if hasDef {
				return def
			}
			ok = false
			return ""
		})
	}
	p = expand(p)
	if rest, found := strings.CutPrefix(p, "~"); found && (rest == "" || rest[0] == '/') {
		home := agenttype.Home(func(k string) string { return vars[k] })
		if home == "" {
			return "", false
		}
		p = home + rest
	}
	if !ok || !filepath.IsAbs(p) {
		return "", false
	}
	return filepath.Clean(p), true
}
