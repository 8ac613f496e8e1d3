package mailbox_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/teamkit/teamkit/pkg/mailbox"
)

// Many commands starting at once on a mailbox that does not exist yet (a
// dispatch script's first sends and spawns) all open it: none fails with
// "database is locked" while another is still creating it.
func TestConcurrentFirstOpen(t *testing.T) {
	ctx := context.Background()
	rounds := 30
	if testing.Short() {
		rounds = 5
	}
	for r := 0; r < rounds; r++ {
		path := filepath.Join(t.TempDir(), fmt.Sprintf("fresh%d.db", r))
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				db, err := mailbox.Open(ctx, path, mailbox.Options{})
				if err != nil {
					errs <- err
					return
				}
				db.Close()
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("round %d: %v", r, err)
		}
	}
}
