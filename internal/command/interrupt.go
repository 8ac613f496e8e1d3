package command

import (
	"context"
	"io"
)

// Interruptible runs fn and returns its error, or ctx's as soon as ctx ends
// (SIGTERM, Ctrl-C) even while fn is still blocked — writing to a reader
// that stalls, reading a FIFO nobody writes — where it cannot see ctx.
// fn then runs on unobserved until the process exits, which it is about to:
// a command must stop promptly, and everything it stores is crash-safe.
func Interruptible(ctx context.Context, fn func() error) error {
	CatchSignals(ctx)
	if err := ctx.Err(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Writer is w with every Write Interruptible: a command printing to a pipe
// nobody reads still stops on SIGTERM. After ctx ends every Write fails.
// Wrap a buffered writer's destination, not each small write.
func Writer(ctx context.Context, w io.Writer) io.Writer { return ctxWriter{ctx, w} }

type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	wrote := make(chan int, 1)
	err := Interruptible(c.ctx, func() error {
		n, err := c.w.Write(p)
		wrote <- n
		return err
	})
	select {
	case n := <-wrote:
		return n, err
	default:
		// Given up while the write is still blocked.
		return 0, err
	}
}
