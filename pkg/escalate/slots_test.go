package escalate

import "testing"

// granted reports whether c has been closed (its slot granted).
func granted(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// Slots past the bound are granted in the order asked for, each as one
// is released.
func TestSlotsInOrder(t *testing.T) {
	s := newSlots(2)
	a, b := s.ask(), s.ask()
	if !granted(a) || !granted(b) {
		t.Fatal("the first two of two slots were not granted at once")
	}
	queued := make([]<-chan struct{}, 5)
	for i := range queued {
		queued[i] = s.ask()
	}
	for i, c := range queued {
		if granted(c) {
			t.Fatalf("slot %d granted with none free", i)
		}
	}
	for i := range queued {
		s.release()
		for j, c := range queued {
			if want := j <= i; granted(c) != want {
				t.Fatalf("after %d releases, slot %d granted: %v, want %v (first asked, first granted)", i+1, j, !want, want)
			}
		}
	}
	// Two still held (the last two queued) and none queued: a release
	// frees one for the next ask.
	s.release()
	if c := s.ask(); !granted(c) {
		t.Fatal("a slot released with none queued was not granted to the next ask")
	}
}
