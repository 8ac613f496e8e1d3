package spawn

import (
	"context"

	"github.com/teamkit/teamkit/pkg/agenttype"
)

// Check makes the checks Spawn makes before it touches anything (the
// names, the type and its launch mode, the workdir and its repository when
// the agent gets a worktree, the type's CLI and credentials) and needs no
// mailbox, so that a command can refuse a spawn that cannot start before it
// opens, and perhaps creates, one. Spawn makes them again: a type or a key
// can change between the two.
func Check(ctx context.Context, finder agenttype.Finder, req Request) error {
	_, err := prepare(ctx, finder, req)
	return err
}
