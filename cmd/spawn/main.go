// Command spawn: see the README, or run 'spawn --help'.
package main

import (
	"os"

	"github.com/teamkit/teamkit/internal/cmd/spawn"
	"github.com/teamkit/teamkit/internal/command"
	// spawn serves SQLite and PostgreSQL mailboxes itself (inbox, stale and
	// ready hand PostgreSQL to teamkit-postgres instead).
	_ "github.com/teamkit/teamkit/pkg/mailbox/pgdriver"
)

func main() { os.Exit(command.Main(spawn.App)) }
