// Package atomicfile writes a file whole or not at all: under a temporary
// name beside it, then renamed over it, so that a reader, or a process
// killed part way, finds the old content or the new, never part of either.
package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"
)

// Write replaces path with data, with mode. The temporary file is removed
// when anything fails. It is named path.tmp-*: a run's files are grouped by
// the run id before their first dot (mailbox.Runs), and a temporary one,
// left by a process killed part way, goes with its run.
func Write(path string, data []byte, mode fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if err == nil {
		// Chmod explicitly: CreateTemp's 0600 and the umask must not
		// decide the mode (whether a script is executable).
		err = tmp.Chmod(mode)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
