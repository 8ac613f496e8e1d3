// Command spawn: see the README, or run 'spawn --help'.
package main

import (
	"os"

	"github.com/teamkit/teamkit/pkg/cmd/spawn"
	"github.com/teamkit/teamkit/pkg/command"
)

func main() { os.Exit(command.Main(spawn.App)) }
