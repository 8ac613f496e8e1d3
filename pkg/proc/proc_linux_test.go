package proc

import (
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
