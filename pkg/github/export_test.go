package github

import (
	"testing"
	"time"
)

// SetRetryWait hands every wait the retry policy chooses, until t ends, to f,
// and has go-retryablehttp wait what f returns instead.
func SetRetryWait(t testing.TB, f func(time.Duration) time.Duration) {
	old := testOnlyRetryWait
	testOnlyRetryWait = f
	t.Cleanup(func() { testOnlyRetryWait = old })
}
