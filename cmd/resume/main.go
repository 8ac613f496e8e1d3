// Command resume: see the README, or run 'resume --help'.
package main

import (
	"os"

	"github.com/teamkit/teamkit/internal/cmd/resume"
	"github.com/teamkit/teamkit/internal/command"
	// resume serves SQLite and PostgreSQL mailboxes itself (inbox, stale and
	// ready hand PostgreSQL to teamkit-postgres instead).
	_ "github.com/teamkit/teamkit/pkg/mailbox/pgdriver"
)

func main() { os.Exit(command.Main(resume.App)) }
