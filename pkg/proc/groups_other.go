//go:build !linux

package proc

import (
	"sync"
	"time"
)

// Members lists, for each group, its live members. Without /proc to scan
// once for them all, each group finds its own.
func (gs Groups) Members() [][]int {
	out := make([][]int, len(gs))
	for i, g := range gs {
		out[i] = g.Members()
	}
	return out
}

// Stop is Group.Stop for all the groups at once: each stops side by side,
// so the whole fleet waits one grace, not one a group.
func (gs Groups) Stop(grace time.Duration) {
	var wg sync.WaitGroup
	for _, g := range gs {
		wg.Add(1)
		go func() { defer wg.Done(); g.Stop(grace) }()
	}
	wg.Wait()
}
