//go:build linux

package teamkit_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Targets are the platforms teamkit is built for (make release).
var Targets = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64", "freebsd/amd64"}

// TestCrossBuild builds the commands and vets every package, tests
// included, for every target: a Linux-only call in code that all platforms
// share fails here. (go vet type-checks every package and its tests; go
// build links the six commands.)
func TestCrossBuild(t *testing.T) {
	for _, target := range Targets {
		goos, goarch, _ := strings.Cut(target, "/")
		t.Run(strings.ReplaceAll(target, "/", "_"), func(t *testing.T) {
			t.Parallel()
			for _, args := range [][]string{{"build", "-o", t.TempDir(), "./cmd/..."}, {"vet", "./..."}} {
				cmd := exec.Command("go", args...)
				cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0")
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("GOOS=%s GOARCH=%s go %s: %v\n%s", goos, goarch, strings.Join(args, " "), err, out)
				}
			}
		})
	}
}
