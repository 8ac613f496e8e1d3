// Command inbox: see the README, or run 'inbox --help'.
package main

import (
	"os"

	"github.com/teamkit/teamkit/internal/cmd/inbox"
	"github.com/teamkit/teamkit/internal/command"
)

func main() { os.Exit(command.Main(inbox.App)) }
