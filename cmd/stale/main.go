// Command stale: see the README, or run 'stale --help'.
package main

import (
	"os"

	"github.com/teamkit/teamkit/pkg/cmd/stale"
	"github.com/teamkit/teamkit/pkg/command"
)

func main() { os.Exit(command.Main(stale.App)) }
