//go:build !windows

package inbox_test

import (
	"strings"
	"testing"
)

// A field a message does not have is a usage error before the mailbox is
// read (README, --format), wherever the template names it: in a branch the
// sample message does not take too, not a failure (exit 1) at the first
// message that takes it, every drain after.
func TestFormatFieldInUntakenBranch(t *testing.T) {
	h := newHarness(t)
	h.ok("send", "crew", "w", "no subject here")
	for _, f := range []string{
		"{{if .Subject}}{{.Subject}}{{else}}{{firstline .Bdy}}{{end}}",
		"{{if .ReplyTo}}re {{.ReplyTo}}{{else}}{{.Nope}}{{end}}",
		"{{with .Subject}}{{.}}{{else}}{{$.Frm}}{{end}}",
		"{{if eq .From \"boss\"}}{{.CreatedAt.Frmat \"15:04\"}}{{end}}",
	} {
		r := h.run("crew", "w", "--peek", "--format", f)
		if r.Code != 64 || !strings.Contains(r.Stderr, "can't evaluate field") {
			t.Errorf("--format %q: exit %d, stderr %q; want 64, the field named", f, r.Code, r.Stderr)
		}
	}
	// Fields, methods and $ reached in any branch are fine; inside with
	// (and range), dot is something else and is left to the message.
	for _, f := range []string{
		"{{if .Subject}}{{.Subject}}{{else}}{{firstline .Body}}{{end}}",
		"{{.CreatedAt.Format \"15:04\"}} {{if not .ReadAt.IsZero}}{{.ReadAt.Unix}}{{end}}",
		"{{with .Subject}}{{.}} {{$.From}}{{end}}{{with .CreatedAt}}{{.Year}}{{end}}",
		"{{json .}}",
	} {
		if r := h.run("crew", "w", "--peek", "--format", f); r.Code != 0 {
			t.Errorf("--format %q: exit %d, stderr %q; want 0", f, r.Code, r.Stderr)
		}
	}
}
