package wait

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestSleep(t *testing.T) {
	start := time.Now()
	if err := Sleep(context.Background(), 10*time.Millisecond); err != nil || time.Since(start) < 10*time.Millisecond {
		t.Fatalf("Sleep = %v after %v", err, time.Since(start))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// An hour's sleep on a cancelled context returns at once, with its error.
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep on a cancelled context = %v", err)
	}
}
