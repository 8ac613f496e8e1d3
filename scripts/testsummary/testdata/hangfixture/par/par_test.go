package par

import (
	"testing"
	"time"
)

// TestHang hangs; TestSlow passes after it started, so the timeout's panic
// follows TestSlow's last line.
func TestHang(t *testing.T) {
	t.Parallel()
	t.Log("waiting on the agent")
	select {}
}

func TestSlow(t *testing.T) {
	t.Parallel()
	time.Sleep(time.Second)
	t.Log("slow but done")
}
