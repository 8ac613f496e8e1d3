package seq

import "testing"

// TestPar1 and TestPar2 pause in t.Parallel until the sequential tests are
// done; TestSub's subtest hangs before they are.
func TestPar1(t *testing.T) { t.Parallel() }
func TestPar2(t *testing.T) { t.Parallel() }

func TestSub(t *testing.T) {
	t.Run("one", func(t *testing.T) {
		t.Log("waiting on the lock")
		select {}
	})
}
