package worktree_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/teamkit/teamkit/pkg/worktree"
)

func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestPending: a branch's commit counts as work until it is merged into
// the main worktree's HEAD or pushed; an untracked file counts too; Remove
// refuses while there is any, and then removes worktree and branch.
func TestPending(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but git is missing (.ci/run installs it)")
		}
		t.Skip("git is not installed: apt-get install git runs this test")
	}
	ctx := context.Background()
	dir := t.TempDir()
	repo := filepath.Join(dir, "repo")
	run(t, dir, "init", "-q", "-b", "main", repo)
	run(t, repo, "commit", "-q", "--allow-empty", "-m", "init")
	wt, branch := filepath.Join(dir, "wt"), worktree.Branch("team", "w1")
	if _, err := worktree.Repo(ctx, dir); err == nil {
		t.Fatal("Repo of a plain directory: want an error")
	}
	top, err := worktree.Repo(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := worktree.Make(ctx, top, wt, branch); err != nil {
		t.Fatal(err)
	}
	if _, _, err := worktree.Make(ctx, top, wt, branch); err != nil {
		t.Fatalf("Make again (reuse): %v", err)
	}
	if w, err := worktree.Pending(ctx, wt, branch); err != nil || !w.None() {
		t.Fatalf("fresh worktree: Pending = %+v, %v; want none", w, err)
	}
	os.WriteFile(filepath.Join(wt, "f.txt"), []byte("x\n"), 0o644)
	if w, _ := worktree.Pending(ctx, wt, branch); len(w.Changes) != 1 || len(w.Commits) != 0 {
		t.Fatalf("untracked file: Pending = %+v; want one change", w)
	}
	run(t, wt, "add", "f.txt")
	run(t, wt, "commit", "-q", "-m", "add f")
	w, _ := worktree.Pending(ctx, wt, branch)
	if len(w.Commits) != 1 || !strings.HasSuffix(w.Commits[0], " add f") || len(w.Changes) != 0 {
		t.Fatalf("one commit: Pending = %+v", w)
	}
	err = worktree.Remove(ctx, wt, branch)
	if _, ok := err.(*worktree.InUseError); !ok {
		t.Fatalf("Remove with a commit: %v; want an InUseError", err)
	}
	run(t, repo, "merge", "-q", branch)
	if err := worktree.Remove(ctx, wt, branch); err != nil {
		t.Fatalf("Remove once merged: %v", err)
	}
	if _, err := os.Stat(wt); !os.IsNotExist(err) {
		t.Fatalf("worktree still there: %v", err)
	}
	if out := run(t, repo, "branch", "--list", branch); out != "" {
		t.Fatalf("branch still there: %q", out)
	}
}
