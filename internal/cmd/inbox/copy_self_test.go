//go:build !windows

package inbox_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copy refuses to copy a mailbox into itself however --to spells it (a
// "./", a link to it): as a usage error, at once, not as another process
// holding its write lock (exit 1, after the busy timeout, with a hint to
// raise it) when the only holder is the copy itself.
func TestCopyIntoItself(t *testing.T) {
	h := newHarness(t)
	h.Vars["TEAMKIT_BUSY_TIMEOUT"] = "300ms"
	h.ok("send", "crew", "w", "one")
	dir := filepath.Dir(h.DB)
	if err := os.Symlink(h.DB, filepath.Join(dir, "link.db")); err != nil {
		t.Fatal(err)
	}
	for _, to := range []string{filepath.Join(dir, ".", "x", "..", "teamkit.db"), dir + "/./teamkit.db", filepath.Join(dir, "link.db")} {
		r := h.run("copy", "--to", to)
		if r.Code != 64 || !strings.Contains(r.Stderr, "--to is the mailbox being copied") {
			t.Errorf("inbox copy --to %s (the mailbox itself): exit %d, stderr %q; want 64 and --to is the mailbox being copied", to, r.Code, r.Stderr)
		}
	}
}
