// Package worktree gives an agent a git worktree of its own: a checkout of
// the spawner's repository on a branch named for its team and agent, so
// agents working side by side never edit the same files. It also says
// whether a worktree still holds work (commits neither merged into the
// repository's current HEAD nor pushed, or uncommitted changes) before it
// is removed. git is run directly, never through a shell.
//
// Public: a Go program embedding teamkit may import this package.
package worktree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ErrNotRepo is a directory that is not inside a git repository.
var ErrNotRepo = errors.New("not inside a git repository")

// Branch is the branch an agent's worktree is on: teamkit/<team>/<agent>.
func Branch(team, name string) string { return "teamkit/" + team + "/" + name }

// git runs git with args in dir and returns its trimmed stdout; a failure
// carries git's own message.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	// A hook or a pager must not wait on a terminal nobody watches.
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = err.Error()
		}
		return "", fmt.Errorf("git %s: %s", args[0], firstLine(msg))
	}
	return strings.TrimSpace(out.String()), nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// Repo is the top of the git repository (its main or a linked worktree)
// holding dir.
func Repo(ctx context.Context, dir string) (string, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return "", fmt.Errorf("a worktree needs git, which is not on PATH")
	}
	top, err := git(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", fmt.Errorf("%s: %w", dir, ErrNotRepo)
	}
	return top, nil
}

// CheckBranch refuses a branch name git would not accept.
func CheckBranch(ctx context.Context, repo, branch string) error {
	if _, err := git(ctx, repo, "check-ref-format", "--branch", branch); err != nil {
		return fmt.Errorf("branch %q is not a name git accepts", branch)
	}
	return nil
}

// Make makes path a worktree of repo on branch: it creates the branch
// from repo's HEAD when it does not exist, and reuses a worktree already at
// path (an earlier run of the same agent). It reports whether it made the
// worktree and the branch, for Undo.
func Make(ctx context.Context, repo, path, branch string) (madeTree, madeBranch bool, err error) {
	if Is(ctx, path) {
		return false, false, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return false, false, fmt.Errorf("create worktree directory: %w", err)
	}
	// A worktree removed by hand leaves git's record of it behind, which
	// would refuse the path.
	git(ctx, repo, "worktree", "prune")
	args := []string{"worktree", "add", "-b", branch, path}
	madeBranch = true
	if _, err := git(ctx, repo, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch); err == nil {
		args, madeBranch = []string{"worktree", "add", path, branch}, false
	}
	if _, err := git(ctx, repo, args...); err != nil {
		return false, false, err
	}
	return true, madeBranch, nil
}

// Undo removes what Make made for a spawn that failed before any record
// named it: the worktree, and the branch when Make created it.
func Undo(ctx context.Context, repo, path, branch string, madeBranch bool) {
	if _, err := git(ctx, repo, "worktree", "remove", "--force", path); err != nil {
		return
	}
	if madeBranch {
		git(ctx, repo, "branch", "-D", branch)
	}
}

// Is reports whether path is the top of a git worktree.
func Is(ctx context.Context, path string) bool {
	top, err := git(ctx, path, "rev-parse", "--show-toplevel")
	if err != nil {
		return false
	}
	a, _ := filepath.EvalSymlinks(top)
	b, _ := filepath.EvalSymlinks(path)
	return a != "" && a == b
}

// Work is what a worktree holds that removing it would lose.
type Work struct {
	// Commits are the branch's commits (short hash and subject) neither
	// in the repository's current HEAD nor on any remote-tracking branch.
	Commits []string
	// Changes are the files with uncommitted changes (git status --short).
	Changes []string
}

// None reports whether there is nothing to lose.
func (w Work) None() bool { return len(w.Commits) == 0 && len(w.Changes) == 0 }

func (w Work) String() string {
	var parts []string
	if n := len(w.Commits); n > 0 {
		parts = append(parts, fmt.Sprintf("%d commit(s) neither merged nor pushed: %s", n, strings.Join(w.Commits, "; ")))
	}
	if n := len(w.Changes); n > 0 {
		parts = append(parts, fmt.Sprintf("%d uncommitted change(s): %s", n, strings.Join(w.Changes, ", ")))
	}
	return strings.Join(parts, "; ")
}

// Pending is the work in the worktree at path on branch: "merged" is into
// the current HEAD of the repository the worktree belongs to (its main
// worktree), "pushed" is reachable from a remote-tracking branch.
func Pending(ctx context.Context, path, branch string) (Work, error) {
	var w Work
	repo, err := mainOf(ctx, path)
	if err != nil {
		return w, err
	}
	head, err := git(ctx, repo, "rev-parse", "--verify", "HEAD")
	if err != nil {
		return w, err
	}
	// The worktree's own HEAD too: detached (a rebase stopped midway, a
	// checkout of a commit), its commits are on no branch, and removing
	// the worktree loses them with its HEAD and reflog.
	log, err := git(ctx, path, "log", "--format=%h %s", "refs/heads/"+branch, "HEAD", "--not", head, "--remotes")
	if err != nil {
		return w, err
	}
	if log != "" {
		w.Commits = strings.Split(log, "\n")
	}
	status, err := git(ctx, path, "status", "--porcelain", "--untracked-files=all")
	if err != nil {
		return w, err
	}
	for _, l := range strings.Split(status, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			w.Changes = append(w.Changes, l)
		}
	}
	return w, nil
}

// Remove removes the worktree at path and its branch, but only when
// Pending finds nothing there: otherwise it returns an *InUseError saying
// what.
func Remove(ctx context.Context, path, branch string) error {
	w, err := Pending(ctx, path, branch)
	if err != nil {
		return err
	}
	if !w.None() {
		return &InUseError{Path: path, Branch: branch, Work: w}
	}
	repo, err := mainOf(ctx, path)
	if err != nil {
		return err
	}
	if _, err := git(ctx, repo, "worktree", "remove", path); err != nil {
		return err
	}
	// Merged or pushed: the branch holds nothing the repository lacks.
	_, err = git(ctx, repo, "branch", "-D", branch)
	return err
}

// mainOf is the main worktree of the repository the worktree at path
// belongs to: the spawner's checkout, whose HEAD "merged" is judged by.
func mainOf(ctx context.Context, path string) (string, error) {
	list, err := git(ctx, path, "worktree", "list", "--porcelain")
	if err != nil {
		return "", err
	}
	first, _, _ := strings.Cut(list, "\n")
	main, ok := strings.CutPrefix(first, "worktree ")
	if !ok {
		return "", fmt.Errorf("git worktree list: no main worktree in %q", first)
	}
	return main, nil
}

// InUseError is a worktree Remove refused: it holds work.
type InUseError struct {
	Path, Branch string
	Work         Work
}

func (e *InUseError) Error() string {
	return fmt.Sprintf("worktree %s (branch %s) holds work: %s", e.Path, e.Branch, e.Work)
}
