package spawn_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/teamkit/teamkit/internal/command/commandtest"
	spawnpkg "github.com/teamkit/teamkit/pkg/spawn"
)

// spawn log --follow "returns when the run ends"; for an agent waiting in
// the queue it failed at once (exit 1), saying the log may have been
// pruned: there was no log yet. The follow runs as a process of its own:
// two commands at once in one process share urfave/cli's global flags.
func TestFollowAQueuedAgent(t *testing.T) {
	l, run := queueBehind(t)
	self, err := spawnpkg.Executable()
	if err != nil {
		t.Fatal(err)
	}
	follow := exec.Command(self, "log", team, "w2", "--follow")
	follow.Env = append(os.Environ(), "TEAMKIT_DB="+l.DB)
	for k, v := range l.Vars {
		follow.Env = append(follow.Env, k+"="+v)
	}
	var stdout, stderr bytes.Buffer
	follow.Stdout, follow.Stderr = &stdout, &stderr
	if err := follow.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan commandtest.Result, 1)
	go func() {
		err := follow.Wait()
		code := 0
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			code = -1
		}
		done <- commandtest.Result{Code: code, Stdout: stdout.String(), Stderr: stderr.String()}
	}()
	defer follow.Process.Kill()
	l.Want(0, "stop", team, "w1")
	l.waitState("w2", "running", "ready")
	l.Want(0, "stop", team, "w2")
	select {
	case r := <-done:
		if r.Code != 0 || !strings.Contains(r.Stdout, "run "+run+" exited with code") {
			t.Errorf("spawn log %s w2 --follow, begun while w2 was queued: exit %d, stdout %q, stderr %q; want its run's log to its end", team, r.Code, r.Stdout, r.Stderr)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("spawn log --follow did not return 2 minutes after the run ended")
	}
}
