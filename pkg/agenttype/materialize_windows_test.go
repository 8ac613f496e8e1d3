package agenttype

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// A built-in type already written out, unchanged, is not written again
// (Materialize's promise: "an unchanged type costs no writes"). On Windows
// that matters beyond the cost: a file is replaced by a rename, which
// Windows refuses while another process has the file open (Go opens files
// without FILE_SHARE_DELETE), as a concurrent spawn of the same type does
// while it reads the file to compare it.
func TestMaterializeUnchangedWindows(t *testing.T) {
	dir, err := os.MkdirTemp("", "state")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	typ, err := Finder{Builtin: Builtin()}.Find("probe")
	if err != nil {
		t.Fatal(err)
	}
	root, err := typ.Materialize(dir)
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(root, "type.conf")
	before, err := os.Stat(conf)
	if err != nil {
		t.Fatal(err)
	}
	os.SameFile(before, before) // Windows reads a file's id when first asked
	if _, err := typ.Materialize(dir); err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(conf)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(before, after) {
		t.Errorf("the unchanged %s was replaced by a second Materialize", conf)
	}

	// Two spawns of the type at once: each reads the files to compare
	// them while the other replaces them.
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				if _, err := typ.Materialize(dir); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent Materialize: %v", err)
	}

	// Another spawn reading the type's files at that moment.
	f, err := os.Open(conf)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := typ.Materialize(dir); err != nil {
		t.Errorf("Materialize while another process reads the unchanged type.conf: %v", err)
	}
}
