package command

import (
	"runtime/debug"

	"github.com/urfave/cli/v2"
)

// version is set at build time:
//
//	go build -ldflags "-X github.com/teamkit/teamkit/internal/command.version=v1.2.3" ./cmd/...
//
// (make install does this from git describe).
var version string

// Version is the toolkit's version: the ldflags value, else what the Go
// toolchain recorded (the module version for go install …@version, the VCS
// revision for a build in a checkout), else "devel".
func Version() string {
	if version != "" {
		return version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		return "devel-" + rev + dirty
	}
	return "devel"
}

func init() {
	// --version only: -v is left free for the commands.
	cli.VersionFlag = &cli.BoolFlag{Name: "version", Usage: "print the version and exit"}
	cli.VersionPrinter = func(c *cli.Context) {
		c.App.Writer.Write([]byte(c.App.Name + " (teamkit) " + c.App.Version + "\n"))
	}
}
