package agenttype

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// A Windows directory has a drive letter, whose colon is not a list
// separator: TEAMKIT_TYPES=C:\Users\me\types names one directory. Git Bash
// hands a native program a path list (TEAMKIT_TYPES=/c/a:/d/b) as C:\a;D:\b.
func TestSearchDirsWindowsPaths(t *testing.T) {
	for _, tt := range []struct {
		types string
		want  []string
	}{
		{`C:\Users\me\types`, []string{`C:\Users\me\types`}},
		{`C:\a;D:\b`, []string{`C:\a`, `D:\b`}},
	} {
		got := SearchDirs(func(k string) string {
			if k == "TEAMKIT_TYPES" {
				return tt.types
			}
			return ""
		})
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("TEAMKIT_TYPES=%s: SearchDirs = %q, want %q", tt.types, got, tt.want)
		}
	}
}

// A type in a directory on TEAMKIT_TYPES is found when that directory is
// on another drive than the working directory.
func TestFindOnAnotherDriveWindows(t *testing.T) {
	dir, err := os.MkdirTemp("", "types")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	wd, _ := os.Getwd()
	if filepath.VolumeName(wd) == filepath.VolumeName(dir) {
		t.Skipf("the working directory %s is on the same drive as %s", wd, dir)
	}
	if err := os.MkdirAll(filepath.Join(dir, "mine"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mine", "type.conf"), []byte("command=agent.exe {prompt}\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := NewFinder(func(k string) string {
		if k == "TEAMKIT_TYPES" {
			return dir
		}
		return ""
	})
	if _, err := f.Find("mine"); err != nil {
		t.Fatalf("TEAMKIT_TYPES=%s (working directory %s): %v", dir, wd, err)
	}
}
