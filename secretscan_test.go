//go:build linux

package teamkit_test

import (
	"encoding/base64"
	"errors"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// secretVars name the variables whose values are secrets: none of them may
// land in a file, a log or a command's output.
var secretVars = []string{
	"GH_TOKEN", "GITHUB_TOKEN", "TEAMKIT_SLACK_BOT_TOKEN", "TEAMKIT_SLACK_APP_TOKEN",
	"TEAMKIT_SLACK_WEBHOOK", "PGPASSWORD", "OPENAI_API_KEY", "ANTHROPIC_API_KEY",
	"GEMINI_API_KEY", "CANARY_PG", "CANARY_EXTRA",
}

// secretForms are the ways a secret may be spelt where it lands.
func secretForms(v string) []string {
	forms := []string{v, url.QueryEscape(v), url.PathEscape(v),
		base64.StdEncoding.EncodeToString([]byte(v)), base64.RawURLEncoding.EncodeToString([]byte(v))}
	// Base64 of the secret at each of the three alignments, trimmed of the
	// characters that depend on its neighbours.
	for off := 1; off < 3; off++ {
		b := base64.StdEncoding.EncodeToString(append(make([]byte, off), v...))
		forms = append(forms, b[4:len(b)-4])
	}
	return forms
}

// noSecret fails when any secret variable's value (at least 8 bytes), in
// any of its forms, is in the last command's stdout or stderr or in any
// file under the directories named:
//
//	nosecret DIR...
func noSecret(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("usage: nosecret DIR...")
	}
	type canary struct{ name, form string }
	var cs []canary
	for _, n := range secretVars {
		v := ts.Getenv(n)
		if len(v) < 8 {
			continue
		}
		for _, f := range secretForms(v) {
			cs = append(cs, canary{n, f})
		}
	}
	// The password in a PostgreSQL mailbox's URL.
	for _, n := range []string{"TEAMKIT_DB", "CANARY_URL"} {
		if u, err := url.Parse(ts.Getenv(n)); err == nil && u.User != nil {
			if p, ok := u.User.Password(); ok && len(p) >= 8 {
				for _, f := range secretForms(p) {
					cs = append(cs, canary{n + " password", f})
				}
			}
		}
	}
	check := func(where string, data []byte) {
		for _, c := range cs {
			if strings.Contains(string(data), c.form) {
				ts.Fatalf("nosecret: %s holds %s (as %q)", where, c.name, c.form)
			}
		}
	}
	check("stdout", []byte(ts.ReadFile("stdout")))
	check("stderr", []byte(ts.ReadFile("stderr")))
	for _, dir := range args {
		root := ts.MkAbs(dir)
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if err != nil || d.IsDir() || !d.Type().IsRegular() {
				return err
			}
			if strings.HasSuffix(path, ".txtar-env") {
				return nil
			}
			data, err := os.ReadFile(path)
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if err != nil {
				return err
			}
			check(path, data)
			return nil
		})
		ts.Check(err)
	}
}
