// Package readlimit reads an input whole without trusting its size.
//
// os.ReadFile and io.ReadAll read until the input ends, and /dev/zero, a
// symlink to it or an endless pipe never ends: the command grows until it dies
// of out-of-memory with a runtime stack trace. A task file or stdin, a type's
// files and a deciders list are read here instead, each with a limit chosen by
// the code that owns the input: reading stops one byte past the limit and the
// caller gets a *TooLargeError to report on one line.
//
// Regular also refuses a file that can only sensibly be a regular file (a
// type's type.conf) without blocking on it: opening a FIFO the ordinary way
// blocks until a writer comes, deaf to the SIGTERM the commands catch.
//
// Public: a Go program embedding teamkit may import this package.
package readlimit

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// TooLargeError is the error for an input longer than its limit.
type TooLargeError struct{ Max int64 }

func (e *TooLargeError) Error() string { return "larger than " + Size(e.Max) }

// NotRegularError is the error for a path Regular refuses.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s: is %s, not a regular file", e.Path, Kind(e.Mode))
}

// Read reads r to its end, at most max bytes: once more come it stops, one
// byte past max however long r goes on, and returns a *TooLargeError.
func Read(r io.Reader, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, &TooLargeError{Max: max}
	}
	return data, nil
}

// File reads the file at path whole, at most max bytes, whatever kind of
// file it is: a pipe (`<(cmd)`, /dev/stdin) is a fair source of text. Every
// error names path; a long file's wraps a *TooLargeError.
func File(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readNamed(f, path, max)
}

// readNamed is Read of the open file path, its size error naming path
// (os.File's own errors already do).
func readNamed(f *os.File, path string, max int64) ([]byte, error) {
	data, err := Read(f, max)
	if _, ok := err.(*TooLargeError); ok {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return data, err
}

// Regular is File for a file that must be a regular file (a symlink to one
// is followed). It is opened non-blocking, so a FIFO does not hold the open
// until a writer comes, and its kind is checked on the open file (no window
// between the check and the read): anything but a regular file is refused
// with a *NotRegularError naming path. A missing file's error matches
// fs.ErrNotExist.
func Regular(path string, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, &NotRegularError{Path: path, Mode: st.Mode()}
	}
	// O_NONBLOCK means nothing to a regular file's reads.
	return readNamed(f, path, max)
}

// Size is n bytes as a person reads a limit: "1 MiB", "128 KiB", "100 bytes".
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Kind names a file type that is not regular: "a FIFO", "a directory".
func Kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeDir != 0:
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "a special file (" + m.Type().String() + ")"
}
