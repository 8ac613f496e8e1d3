package teamkit_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestScriptsKeepLF: Git for Windows installs with core.autocrlf=true, so a
// clone made there (README: `make install` from Git Bash) checks text files
// out with CRLF unless .gitattributes says otherwise. A shell script with
// CRLF does not run (bash: $'\r': command not found; set: -: invalid
// option), and the built-in probe type embeds its agent.sh from the checkout.
// Every tracked shell script must check out with LF whatever autocrlf says.
func TestScriptsKeepLF(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but git is missing (.ci/run installs it)")
		}
		t.Skip("git is not installed: apt-get install git runs this test")
	}
	out, err := exec.Command("git", "ls-files", "*.sh").Output()
	if err != nil {
		// A tree exported without its history (a release tarball) has no
		// attributes to test: not a missing part CI must install.
		t.Skipf("not a git checkout (run it in a clone): %v", err)
	}
	tmp := t.TempDir()
	for _, f := range strings.Fields(string(out)) {
		// checkout-index applies the conversion a checkout would, with
		// the attributes of this tree.
		c := exec.Command("git", "-c", "core.autocrlf=true", "checkout-index", "--temp", "--", f)
		c.Dir = "."
		res, err := c.Output()
		if err != nil {
			t.Fatalf("git checkout-index %s: %v", f, err)
		}
		tmpName, _, _ := strings.Cut(strings.TrimSpace(string(res)), "\t")
		data, err := os.ReadFile(tmpName)
		os.Rename(tmpName, filepath.Join(tmp, filepath.Base(tmpName)))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte("\r\n")) {
			t.Errorf("%s checks out with CRLF under core.autocrlf=true (Git for Windows' default)", f)
		}
	}
}
