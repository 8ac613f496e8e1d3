package escalate

import "sync"

// slots bounds the re-spawns a pass runs at once (--parallel) and grants
// them in the order they were asked for: re-spawns past the bound start in
// the order the pass took them up, not in whichever order the Go scheduler
// wakes their goroutines (a channel used as a semaphore promises none).
type slots struct {
	mu    sync.Mutex
	free  int
	queue []chan struct{}
}

func newSlots(n int) *slots { return &slots{free: n} }

// ask queues for a slot; the channel it returns is closed once the slot is
// granted, and the holder must release it.
func (s *slots) ask() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := make(chan struct{})
	if s.free > 0 {
		s.free--
		close(c)
	} else {
		s.queue = append(s.queue, c)
	}
	return c
}

// release gives a granted slot back: to the first still queued, if any.
func (s *slots) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) == 0 {
		s.free++
		return
	}
	close(s.queue[0])
	s.queue = s.queue[1:]
}
