// Command ask: see the README, or run 'ask --help'.
package main

import (
	"os"

	"github.com/teamkit/teamkit/pkg/cmd/ask"
	"github.com/teamkit/teamkit/pkg/command"
)

func main() { os.Exit(command.Main(ask.App)) }
