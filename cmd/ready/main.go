// Command ready: see the README, or run 'ready --help'.
package main

import (
	"os"

	"github.com/teamkit/teamkit/pkg/cmd/ready"
	"github.com/teamkit/teamkit/pkg/command"
)

func main() { os.Exit(command.Main(ready.App)) }
