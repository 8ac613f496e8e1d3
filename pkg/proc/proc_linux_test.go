package proc

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"testing"
)

func TestReadStatOddName(t *testing.T) {
	// A command name with spaces and parentheses must not shift the fields.
	dir := t.TempDir()
	odd := dir + "/a) b (c"
	if err := os.Symlink("/bin/sleep", odd); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(odd, "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	s, err := ReadStat(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if s.PPID != os.Getpid() || s.Start == 0 {
		t.Fatalf("ReadStat = %+v, want ppid %d and a start time", s, os.Getpid())
	}
}

func TestReadProcLineLongerThanItsBuffer(t *testing.T) {
	want, err := ReadStat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	line, err := readProcLine("/proc/self/stat", make([]byte, 16))
	if err != nil || !bytes.HasPrefix(line, fmt.Appendf(nil, "%d (", os.Getpid())) || !bytes.HasSuffix(line, []byte("\n")) ||
		!bytes.Contains(line, fmt.Appendf(nil, ") %c %d %d %d ", want.State, want.PPID, want.Pgrp, want.Session)) {
		t.Fatalf("readProcLine with a 16-byte buffer = %q (%v), want the whole line", line, err)
	}
	if _, err := readProcLine("/proc/self/no-such-file", make([]byte, 16)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("readProcLine of a missing file = %v, want fs.ErrNotExist", err)
	}
}
