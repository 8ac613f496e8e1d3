// Command ready: see the README, or run 'ready --help'.
package main

import (
	"os"

	"github.com/teamkit/teamkit/internal/cmd/ready"
	"github.com/teamkit/teamkit/internal/command"
)

func main() { os.Exit(command.Main(ready.App)) }
