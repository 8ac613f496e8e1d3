// Command stale: see the README, or run 'stale --help'.
package main

import (
	"os"

	"github.com/teamkit/teamkit/internal/cmd/stale"
	"github.com/teamkit/teamkit/internal/command"
)

func main() { os.Exit(command.Main(stale.App)) }
