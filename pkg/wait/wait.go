// Package wait holds the one cancellable sleep the toolkit's own loops use:
// resume --watch between passes. (The GitHub client's retries wait in
// go-retryablehttp, Slack's in slack-go.)
//
// Public: a Go program embedding teamkit may import this package.
package wait

import (
	"context"
	"time"
)

// Sleep waits d, or until ctx ends (then it returns ctx's error).
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
