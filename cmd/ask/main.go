// Command ask: see the README, or run 'ask --help'.
package main

import (
	"os"

	"github.com/teamkit/teamkit/internal/cmd/ask"
	"github.com/teamkit/teamkit/internal/command"
	// ask serves SQLite and PostgreSQL mailboxes itself (inbox, stale and
	// ready hand PostgreSQL to teamkit-postgres instead).
	_ "github.com/teamkit/teamkit/pkg/mailbox/pgdriver"
)

func main() { os.Exit(command.Main(ask.App)) }
