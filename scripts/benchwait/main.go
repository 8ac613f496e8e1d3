// Command benchwait measures what `inbox --wait` costs on each backend:
// how soon a waiter notices a message (from the send returning to the
// waiter's first byte of output), and what an idle waiter costs (CPU over
// an idle interval, and resident memory), with N waiters at once.
//
//	go run ./scripts/benchwait -n 50 -idle 20s -runs 30
//
// The PostgreSQL side uses TEAMKIT_TEST_POSTGRES, else a throwaway cluster
// started as the tests start one (internal/pgtest). inbox must be on PATH.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/teamkit/teamkit/internal/pgtest"
	"github.com/teamkit/teamkit/pkg/mailbox"
)

func main() {
	n := flag.Int("n", 50, "idle waiters at once")
	idle := flag.Duration("idle", 20*time.Second, "how long to measure the idle waiters")
	runs := flag.Int("runs", 30, "notice-latency samples per backend")
	flag.Parse()
	code := 0
	if err := run(*n, *idle, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "benchwait:", err)
		code = 1
	}
	pgtest.Stop()
	os.Exit(code)
}

func run(n int, idle time.Duration, runs int) error {
	dir, err := os.MkdirTemp("", "teamkit-benchwait-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	pgURL, _, err := pgtest.NewDatabase()
	if err != nil {
		return fmt.Errorf("PostgreSQL: %w", err)
	}
	fmt.Printf("| backend | notice median ms | notice max ms | exit after output median ms | idle CPU per waiter (%% of a core) | RSS per waiter MB |\n|---|---|---|---|---|---|\n")
	for _, b := range []struct{ name, db string }{{"SQLite", filepath.Join(dir, "team.db")}, {"PostgreSQL", pgURL}} {
		med, worst, exit, err := notice(b.db, runs)
		if err != nil {
			return fmt.Errorf("%s: %w", b.name, err)
		}
		cpu, rss, err := idleCost(b.db, n, idle)
		if err != nil {
			return fmt.Errorf("%s: %w", b.name, err)
		}
		fmt.Printf("| %s | %.1f | %.1f | %.1f | %.3f | %.1f |\n", b.name, ms(med), ms(worst), ms(exit), cpu, rss)
	}
	fmt.Printf("\n%d idle waiters measured for %s; %d notice samples each.\n", n, idle, runs)
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func env(db string) []string {
	return append(os.Environ(), "TEAMKIT_DB="+db)
}

// notice starts a waiter, lets it settle into its wait, sends it a message
// in-process and times the send's return to the waiter's first output, and
// that output to the waiter's exit.
func notice(db string, runs int) (median, worst, exitMedian time.Duration, err error) {
	ctx := context.Background()
	m, err := mailbox.Open(ctx, db, mailbox.Options{})
	if err != nil {
		return 0, 0, 0, err
	}
	defer m.Close()
	var samples, exits []time.Duration
	for i := 0; i < runs; i++ {
		cmd := exec.Command("inbox", "bench", "lat", "--wait", "60s")
		cmd.Env = env(db)
		out, err := cmd.StdoutPipe()
		if err != nil {
			return 0, 0, 0, err
		}
		if err := cmd.Start(); err != nil {
			return 0, 0, 0, err
		}
		time.Sleep(300 * time.Millisecond) // into its wait
		got := make(chan time.Time, 1)
		go func() {
			r := bufio.NewReader(out)
			r.ReadByte()
			got <- time.Now()
			r.WriteTo(devNull{})
		}()
		if _, err := m.Send(ctx, mailbox.Message{Team: "bench", From: "b", To: "lat", Body: "wake up"}); err != nil {
			return 0, 0, 0, err
		}
		sent := time.Now()
		var first time.Time
		select {
		case first = <-got:
			samples = append(samples, first.Sub(sent))
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			return 0, 0, 0, fmt.Errorf("the waiter never noticed")
		}
		cmd.Wait()
		exits = append(exits, time.Since(first))
	}
	sort.Slice(samples, func(i, j int) bool { return samples[i] < samples[j] })
	sort.Slice(exits, func(i, j int) bool { return exits[i] < exits[j] })
	return samples[len(samples)/2], samples[len(samples)-1], exits[len(exits)/2], nil
}

type devNull struct{}

func (devNull) Write(p []byte) (int, error) { return len(p), nil }

// idleCost starts n waiters on inboxes that get nothing, lets them settle,
// and reads their CPU time over idle and their RSS.
func idleCost(db string, n int, idle time.Duration) (cpuPct, rssMB float64, err error) {
	var cmds []*exec.Cmd
	defer func() {
		for _, c := range cmds {
			c.Process.Kill()
			c.Wait()
		}
	}()
	for i := 0; i < n; i++ {
		c := exec.Command("inbox", "bench", "idle"+strconv.Itoa(i), "--wait", "1h")
		c.Env = env(db)
		if err := c.Start(); err != nil {
			return 0, 0, err
		}
		cmds = append(cmds, c)
	}
	time.Sleep(3 * time.Second) // start-up and settling are not idling
	before := make([]int64, n)
	for i, c := range cmds {
		if before[i], err = cpuNanos(c.Process.Pid); err != nil {
			return 0, 0, err
		}
	}
	time.Sleep(idle)
	var total int64
	var rss float64
	for i, c := range cmds {
		t, err := cpuNanos(c.Process.Pid)
		if err != nil {
			return 0, 0, err
		}
		total += t - before[i]
		r, err := rssKB(c.Process.Pid)
		if err != nil {
			return 0, 0, err
		}
		rss += r
	}
	cpuPct = float64(total) / float64(idle) / float64(n) * 100
	return cpuPct, rss / float64(n) / 1024, nil
}

// cpuNanos is the time pid's threads have spent on a CPU, in nanoseconds
// (the first field of each thread's schedstat): the clock ticks of
// /proc/<pid>/stat count an idle waiter's few wake-ups in whole 10 ms
// ticks, or not at all.
func cpuNanos(pid int) (int64, error) {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return 0, err
	}
	var sum int64
	for _, task := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, task.Name()))
		if err != nil {
			return 0, err
		}
		ns, err := strconv.ParseInt(strings.Fields(string(b))[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("schedstat of %d/%s: %w", pid, task.Name(), err)
		}
		sum += ns
	}
	return sum, nil
}

func rssKB(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			v, _ := strconv.ParseFloat(strings.Fields(l)[1], 64)
			return v, nil
		}
	}
	return 0, fmt.Errorf("no VmRSS for pid %d", pid)
}
