package mailbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/teamkit/teamkit/pkg/mailbox"
)

// A mailbox never hands an id out twice, even once prune removed its
// newest messages; nor may its copy, whichever way it goes.
func TestCopyKeepsLastIDs(t *testing.T) {
	ctx := context.Background()
	for _, from := range backends {
		for _, to := range backends {
			t.Run(from.name+"-to-"+to.name, func(t *testing.T) {
				src, c, _ := newDB(t, from)
				for i := 0; i < 3; i++ {
					send(t, src, "t", "s", "w", "m")
				}
				if _, err := src.Drain(ctx, "t", "w", 0, keep(new([]mailbox.Message))); err != nil {
					t.Fatal(err)
				}
				c.Add(48 * time.Hour)
				if n, err := src.PruneMessages(ctx, "t", c.Now().Add(-24*time.Hour), false); err != nil || n != 3 {
					t.Fatalf("prune: %d, %v", n, err)
				}
				dst, _, _ := newDB(t, to)
				if _, err := mailbox.Copy(ctx, src, dst); err != nil {
					t.Fatal(err)
				}
				if m := send(t, src, "t", "s", "w", "in the source"); m.ID != 4 {
					t.Fatalf("the source's next id is %d, want 4", m.ID)
				}
				if m := send(t, dst, "t", "s", "w", "in the copy"); m.ID != 4 {
					t.Fatalf("the copy's next id is %d: ids 1-3, handed out by the source, are handed out again; want 4", m.ID)
				}
			})
		}
	}
}
