package spawn

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/teamkit/teamkit/pkg/briefing"
)

func TestCommands(t *testing.T) {
	exe := func(dir string, names ...string) string {
		os.MkdirAll(dir, 0o755)
		for _, n := range names {
			if err := os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	root := t.TempDir()
	onPath := exe(filepath.Join(root, "path"), "ready", "inbox")
	beside := exe(filepath.Join(root, "gobin"), "spawn", "ready", "inbox", "ask")
	spaced := exe(filepath.Join(root, "my bin"), "spawn", "ready", "inbox", "ask")

	// PATH first (what the user would run), then beside spawn.
	got := Commands([]string{"PATH=" + onPath}, filepath.Join(beside, "spawn"))
	want := briefing.Commands{Ready: onPath + "/ready", Inbox: onPath + "/inbox", Ask: beside + "/ask"}
	if got != want {
		t.Errorf("Commands = %+v, want %+v", got, want)
	}
	// A PATH without them at all: beside spawn.
	got = Commands([]string{"PATH=/nonexistent"}, filepath.Join(beside, "spawn"))
	if got.Ready != beside+"/ready" || got.Ask != beside+"/ask" {
		t.Errorf("Commands without PATH = %+v", got)
	}
	// Nowhere, or only at a path a shell would need quotes for: bare names.
	got = Commands([]string{"PATH=" + spaced}, filepath.Join(spaced, "spawn"))
	if got != (briefing.Commands{Ready: "ready", Inbox: "inbox", Ask: "ask"}) {
		t.Errorf("Commands with a spaced path = %+v, want bare names", got)
	}
	// A relative PATH entry becomes absolute.
	wd, _ := os.Getwd()
	defer os.Chdir(wd)
	os.Chdir(root)
	got = Commands([]string{"PATH=path"}, "")
	if got.Ready != onPath+"/ready" || got.Ask != "ask" {
		t.Errorf("Commands with a relative PATH = %+v", got)
	}
}
