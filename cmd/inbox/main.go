// Command inbox: see the README, or run 'inbox --help'.
package main

import (
	"os"

	"github.com/teamkit/teamkit/pkg/cmd/inbox"
	"github.com/teamkit/teamkit/pkg/command"
)

func main() { os.Exit(command.Main(inbox.App)) }
