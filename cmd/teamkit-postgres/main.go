// Command teamkit-postgres runs inbox, stale or ready with the PostgreSQL
// client linked in. Those commands link SQLite alone, to start at the
// floor, and hand it their runs on a postgres:// mailbox:
// "teamkit-postgres inbox <args>" is "inbox <args>".
package main

import (
	"os"

	"github.com/teamkit/teamkit/internal/cmd/inbox"
	"github.com/teamkit/teamkit/internal/cmd/ready"
	"github.com/teamkit/teamkit/internal/cmd/stale"
	"github.com/teamkit/teamkit/internal/command"
	_ "github.com/teamkit/teamkit/pkg/mailbox/pgdriver"
)

func main() {
	os.Exit(command.MainOf(map[string]command.App{"inbox": inbox.App, "stale": stale.App, "ready": ready.App}))
}
