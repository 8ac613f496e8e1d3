//go:build !windows

package readlimit

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"testing/iotest"
)

// endless is a reader that never ends, counting what was taken from it.
type endless struct{ read int64 }

func (e *endless) Read(p []byte) (int, error) {
	e.read += int64(len(p))
	return len(p), nil
}

func TestReadStopsOneBytePastMax(t *testing.T) {
	data, err := Read(strings.NewReader("12345"), 5)
	if err != nil || string(data) != "12345" {
		t.Errorf("Read(exactly max) = %q, %v", data, err)
	}
	_, err = Read(strings.NewReader("123456"), 5)
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Max != 5 || err.Error() != "larger than 5 bytes" {
		t.Errorf("Read(max+1) = %v, want larger than 5 bytes", err)
	}
	e := &endless{}
	if _, err := Read(e, 1<<20); !errors.As(err, &tl) || err.Error() != "larger than 1 MiB" {
		t.Errorf("Read(endless) = %v", err)
	}
	if e.read != 1<<20+1 {
		t.Errorf("Read(endless) took %d bytes, want max+1 = %d", e.read, 1<<20+1)
	}
	broken := errors.New("broken")
	if _, err := Read(io.MultiReader(strings.NewReader("ab"), iotest.ErrReader(broken)), 10); err != broken {
		t.Errorf("Read(failing reader) = %v, want its error", err)
	}
}

func TestFile(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	os.WriteFile(small, []byte("alice\nbob\n"), 0o644)
	if data, err := File(small, 10); err != nil || string(data) != "alice\nbob\n" {
		t.Errorf("File(small) = %q, %v", data, err)
	}
	var tl *TooLargeError
	if _, err := File(small, 9); !errors.As(err, &tl) || err.Error() != small+": larger than 9 bytes" {
		t.Errorf("File(over max) = %v, want the path and the limit", err)
	}
	// A device that never ends: the limit, not the memory, stops it.
	if _, err := File("/dev/zero", 1<<10); !errors.As(err, &tl) || err.Error() != "/dev/zero: larger than 1 KiB" {
		t.Errorf("File(/dev/zero) = %v", err)
	}
	if _, err := File(filepath.Join(dir, "nope"), 10); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "nope") {
		t.Errorf("File(missing) = %v, want a not-exist error naming it", err)
	}
}

// A task file may be a pipe (`--task-file <(cmd)`): File reads it.
func TestFileReadsAPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	go func() {
		w.WriteString("from a pipe")
		w.Close()
	}()
	if data, err := File("/dev/fd/"+strconv.Itoa(int(r.Fd())), 100); err != nil || string(data) != "from a pipe" {
		t.Errorf("File(pipe) = %q, %v", data, err)
	}
}

func TestRegular(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "type.conf")
	os.WriteFile(conf, []byte("command=x\n"), 0o644)
	link := filepath.Join(dir, "link.conf")
	os.Symlink(conf, link)
	for _, p := range []string{conf, link} {
		if data, err := Regular(p, 100); err != nil || string(data) != "command=x\n" {
			t.Errorf("Regular(%s) = %q, %v", p, data, err)
		}
	}
	var tl *TooLargeError
	if _, err := Regular(conf, 4); !errors.As(err, &tl) || err.Error() != conf+": larger than 4 bytes" {
		t.Errorf("Regular(over max) = %v", err)
	}
	// Missing: the stat error as it is, so a caller can skip what is absent.
	if _, err := Regular(filepath.Join(dir, "nope"), 100); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Regular(missing) = %v, want fs.ErrNotExist", err)
	}

	zero := filepath.Join(dir, "zero")
	os.Symlink("/dev/zero", zero)
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	fifo := fifoWithWriter(t, dir, "command=from the fifo\n")
	for p, want := range map[string]string{
		zero: zero + ": is a character device, not a regular file",
		sub:  sub + ": is a directory, not a regular file",
		fifo: fifo + ": is a FIFO, not a regular file",
	} {
		_, err := Regular(p, 1<<20)
		var nr *NotRegularError
		if !errors.As(err, &nr) || nr.Path != p || err.Error() != want {
			t.Errorf("Regular(%s) = %v, want %q", p, err, want)
		}
	}
}

// fifoWithWriter makes a FIFO in dir with a writer waiting to write content
// into it. Opening the FIFO to read it therefore returns, and the read ends,
// so code that should have refused the FIFO before opening it fails the test
// instead of hanging it. The writer is let go at cleanup.
func fifoWithWriter(t *testing.T, dir, content string) string {
	path := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if w, err := os.OpenFile(path, os.O_WRONLY, 0); err == nil {
			w.WriteString(content)
			w.Close()
		}
	}()
	t.Cleanup(func() {
		// A read end opened without blocking lets a waiting writer open.
		r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			t.Fatal(err)
		}
		<-done
		r.Close()
	})
	return path
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{
		1 << 20: "1 MiB", 16 << 20: "16 MiB", 128 << 10: "128 KiB", 1<<20 + 1: "1048577 bytes", 5: "5 bytes", 0: "0 bytes",
	} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}
