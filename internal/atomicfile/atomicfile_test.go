package atomicfile

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Write makes the file, replaces it whole with its mode, and leaves no
// temporary file beside it.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state")
	if err := Write(path, []byte("1 2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "3\n" {
		t.Fatalf("read %q, %v; want \"3\\n\"", b, err)
	}
	if st, err := os.Stat(path); err != nil || runtime.GOOS != "windows" && st.Mode().Perm() != 0o755 {
		t.Fatalf("stat: %v, %v; want mode 0755", st.Mode(), err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("the directory holds %d entries, want the file alone", len(entries))
	}
}

// A write that cannot be renamed into place (a directory stands there)
// fails, and leaves the directory as it was.
func TestWriteFailsWhole(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "taken")
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("x"), 0o600); err == nil {
		t.Fatal("Write over a directory succeeded")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("the directory holds %d entries, want the directory alone (no temporary file left)", len(entries))
	}
}
