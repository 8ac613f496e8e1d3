// Package inbox is the inbox command: the team mailbox.
//
//	inbox send <team> (<to> | --all) [BODY|-] [--from NAME] [--subject S] [--reply-to ID]
//	inbox [drain] <team> <name>       [--peek] [--limit N] [--wait D] [--reply-to ID] [--format T] [--json]
//	inbox list <team> [<name>]        [--all] [--json]
//	inbox prune <team> --older D      [--dry-run] [--json]
//
// send stores a message and prints its id; the body comes from the argument,
// or from stdin when it is absent or "-". drain (the default verb) prints the
// unread messages for <name>, oldest first, and marks them read after they
// are written, so a crash can repeat a message but never lose one. --wait
// blocks until a message arrives or the duration passes (then exit 2);
// --reply-to ID takes only the replies to message ID, so dispatchers sharing
// one inbox name never take each other's replies. send --all queues one copy
// per agent recorded in the team; prune removes old read messages and the run
// files of agents long exited.
// Inside an agent, <team> and <name> default to TEAMKIT_TEAM and
// TEAMKIT_AGENT.
//
// Each verb has a file of its own (send.go, drain.go, list.go, prune.go,
// copy.go): its command definition, its options, the parse that fills them
// in, refusing bad input before the mailbox is opened, and the run that
// acts on them (command.WithMailbox).
//
// Internal: the commands' own code; no user should import it.
package inbox

import (
	"github.com/urfave/cli/v2"

	"github.com/teamkit/teamkit/internal/command"
)

// App is the inbox command.
var App = command.App{Build: build, Default: "drain", Mail: true, Quick: []string{"send", "drain", "list", StopHookVerb}}

func build(env *command.Env) *cli.App {
	return &cli.App{
		Name:  "inbox",
		Usage: "the team mailbox: send, drain, list, prune, copy",
		UsageText: "inbox send <team> (<to> | --all) [BODY|-] [--from NAME] [--subject S] [--reply-to ID]\n" +
			"inbox [drain] <team> <name> [--peek] [--limit N] [--wait D] [--reply-to ID] [--format T] [--json]\n" +
			"inbox list <team> [<name>] [--all] [--json]\n" +
			"inbox prune <team> --older D [--dry-run] [--json]\n" +
			"inbox copy --to DB [--db SOURCE] [--json]",
		Description: "Inside an agent started by spawn, <team> and <name> default to $TEAMKIT_TEAM and $TEAMKIT_AGENT.\n" +
			"Durations: a plain number is seconds (60), else 90s, 10m, 1h, 30d.\n" +
			"Exit status: 0 done, 1 failure, 2 --wait passed with no message, 64 usage error.\n\n" +
			"Examples:\n" +
			"   inbox send myteam w1 --from lead -- \"fix the flaky test\"   # id=17\n" +
			"   inbox myteam w1                                           # drain w1's unread messages\n" +
			"   inbox list myteam --all --json",
		Commands: []*cli.Command{
			sendCommand(env),
			drainCommand(env),
			listCommand(env),
			pruneCommand(env),
			copyCommand(env),
			stopHookCommand(env),
		},
	}
}
