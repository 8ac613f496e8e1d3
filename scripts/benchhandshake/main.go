// Command benchhandshake measures spawn's handshake over real processes.
//
// By default: how long after an agent's `ready mark` spawn notices it and
// returns. It spawns a tiny agent type that marks at once, N times, and reads
// the mark's marked_at and consumed_at (set by spawn when it observed the
// mark) from the mailbox.
//
// With -agents: spawn-to-ready of the built-in AI types with their real CLIs
// against the scripted model server (internal/modeltest) — the after= spawn
// reports, N spawns per type, one at a time, each agent let finish before
// the next starts. The CLIs are looked for in -clis (make agent-clis puts
// them there).
//
// With -agents and -resume: for each type, N agents that each ask a
// question (the scripted model has them ask) and exit, every question
// answered with `ask answer`, then one `resume` pass timed re-spawning
// them all: once with --parallel 1 (one re-spawn at a time, what every pass
// did before) and once with --parallel N (all side by side).
//
//	go run ./scripts/benchhandshake -n 30     (spawn and ready must be on PATH)
//	go run ./scripts/benchhandshake -agents claude,codex,gemini,opencode -n 5
//	go run ./scripts/benchhandshake -agents codex -resume -n 4 -latency 2s
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/teamkit/teamkit/internal/modeltest"
	"github.com/teamkit/teamkit/pkg/mailbox"
)

const typeConf = `# marks ready at once, then lingers so spawn sees the mark, not the exit
command=sh -c 'ready mark >/dev/null && sleep 2'
boot=stdin
handshake=actas
`

func main() {
	n := flag.Int("n", 30, "spawns to time (per type with -agents)")
	agents := flag.String("agents", "", "comma-separated built-in AI types to time with their real CLIs")
	clis := flag.String("clis", defaultCLIs(), "directory holding the agent CLIs")
	resume := flag.Bool("resume", false, "with -agents: time a resume pass re-spawning N answered agents, one at a time and side by side")
	latency := flag.Duration("latency", 0, "with -agents: hold each model request this long, as a real model's time to first token")
	flag.Parse()
	var err error
	switch {
	case *agents != "" && *resume:
		err = runResume(strings.Split(*agents, ","), *n, *clis, *latency)
	case *agents != "":
		err = runAgents(strings.Split(*agents, ","), *n, *clis, *latency)
	default:
		err = run(*n)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchhandshake:", err)
		os.Exit(1)
	}
}

func run(n int) error {
	dir, err := os.MkdirTemp("", "teamkit-handshake")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	typeDir := filepath.Join(dir, "types", "marker")
	if err := os.MkdirAll(typeDir, 0o755); err != nil {
		return err
	}
	os.WriteFile(filepath.Join(typeDir, "type.conf"), []byte(typeConf), 0o644)
	os.WriteFile(filepath.Join(typeDir, "template.md"), []byte(`{{template "teamkit" .}}`), 0o644)
	dbPath := filepath.Join(dir, "team.db")
	env := append(os.Environ(), "TEAMKIT_DB="+dbPath, "XDG_STATE_HOME="+filepath.Join(dir, "state"), "TEAMKIT_TYPES="+filepath.Join(dir, "types"))

	var noticed, returned []time.Duration
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("w%d", i)
		cmd := exec.Command("spawn", "marker", name, "--team", "bench", "--timeout", "60s")
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		end := time.Now()
		if err != nil {
			return fmt.Errorf("spawn %s: %v: %s", name, err, out)
		}
		db, err := mailbox.Open(context.Background(), dbPath, mailbox.Options{})
		if err != nil {
			return err
		}
		m, ok, err := db.Ready(context.Background(), "bench", name)
		db.Close()
		if err != nil || !ok || m.ConsumedAt.IsZero() {
			return fmt.Errorf("no consumed mark for %s (%v)", name, err)
		}
		noticed = append(noticed, m.ConsumedAt.Sub(m.MarkedAt))
		returned = append(returned, end.Sub(m.MarkedAt))
	}
	fmt.Printf("spawns: %d\n", n)
	fmt.Printf("mark → spawn noticed it (consumed_at - marked_at): median %v, p90 %v, max %v\n", pct(noticed, 50), pct(noticed, 90), pct(noticed, 100))
	fmt.Printf("mark → spawn process returned:                     median %v, p90 %v, max %v\n", pct(returned, 50), pct(returned, 90), pct(returned, 100))
	return nil
}

func pct(d []time.Duration, p int) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := (len(s)*p + 99) / 100
	return s[max(0, min(len(s)-1, i-1))].Round(100 * time.Microsecond)
}

func defaultCLIs() string {
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "teamkit", "agent-clis", "node_modules", ".bin")
}

var after = regexp.MustCompile(`^status=ready after=([0-9.]+)s `)

// agentBench is a scratch mailbox, home and working directory whose agents'
// CLIs talk to a scripted model server.
type agentBench struct {
	env  []string
	work string
	db   *mailbox.DB
	done func()
}

func newAgentBench(clis string, latency time.Duration) (_ *agentBench, err error) {
	dir, err := os.MkdirTemp("", "teamkit-agents")
	if err != nil {
		return nil, err
	}
	srv, err := modeltest.New(modeltest.Teamkit)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	srv.Marker, srv.Latency = modeltest.BriefingMarker, latency
	b := &agentBench{work: filepath.Join(dir, "work"), done: func() { srv.Close(); os.RemoveAll(dir) }}
	defer func() {
		if err != nil {
			b.done()
		}
	}()
	home, config := filepath.Join(dir, "home"), filepath.Join(dir, "config")
	modelEnv, err := srv.Configure(home, config)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(b.work, 0o755); err != nil {
		return nil, err
	}
	dbPath := filepath.Join(dir, "team.db")
	if b.db, err = mailbox.Open(context.Background(), dbPath, mailbox.Options{}); err != nil {
		return nil, err
	}
	b.done = func() { b.db.Close(); srv.Close(); os.RemoveAll(dir) }
	b.env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+config, "XDG_STATE_HOME="+filepath.Join(dir, "state"),
		"TEAMKIT_DB="+dbPath, "PATH="+clis+string(filepath.ListSeparator)+os.Getenv("PATH"))
	b.env = append(b.env, modelEnv...)
	return b, nil
}

// command is name with args, in the bench's environment and working directory.
func (b *agentBench) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Env, cmd.Dir = b.env, b.work
	return cmd
}

// spawn starts agent name of type ty and returns its spawn-to-ready time;
// the agent then asks its question and exits, which spawn waits for too.
func (b *agentBench) spawn(team, ty, name string) (time.Duration, error) {
	out, err := b.command("spawn", ty, name, "--team", team, "--timeout", "120s").Output()
	m := after.FindSubmatch(out)
	if err != nil || m == nil {
		return 0, fmt.Errorf("spawn %s: %v: %s", name, err, out)
	}
	s, _ := strconv.ParseFloat(string(m[1]), 64)
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		a, err := b.db.Agent(context.Background(), team, name)
		if err == nil && a.ExitCode != nil {
			return time.Duration(s * float64(time.Second)), nil
		}
	}
	return 0, fmt.Errorf("agent %s did not exit within 2 minutes of its handshake", name)
}

// runAgents times spawn-to-ready of each type with its real CLI.
func runAgents(types []string, n int, clis string, latency time.Duration) error {
	b, err := newAgentBench(clis, latency)
	if err != nil {
		return err
	}
	defer b.done()
	fmt.Printf("spawns per type: %d, one at a time\n", n)
	for _, ty := range types {
		var ready []time.Duration
		for i := 0; i < n; i++ {
			d, err := b.spawn("bench", ty, fmt.Sprintf("%s-%d", ty, i))
			if err != nil {
				return err
			}
			ready = append(ready, d)
		}
		fmt.Printf("%-9s spawn → status=ready: median %v, min %v, max %v\n", ty, pct(ready, 50), pct(ready, 0), pct(ready, 100))
	}
	return nil
}

var resumedReady = regexp.MustCompile(`(?m)^resumed .*status=ready `)

// runResume times one resume pass carrying n answers back to agents of
// each type, one re-spawn at a time and n side by side.
func runResume(types []string, n int, clis string, latency time.Duration) error {
	b, err := newAgentBench(clis, latency)
	if err != nil {
		return err
	}
	defer b.done()
	fmt.Printf("answers per pass: %d; each model request held %v\n", n, latency)
	for _, ty := range types {
		for _, parallel := range []int{1, n} {
			team := fmt.Sprintf("%s-p%d", ty, parallel)
			for i := 0; i < n; i++ {
				if _, err := b.spawn(team, ty, fmt.Sprintf("w%d", i)); err != nil {
					return err
				}
			}
			asks, err := b.db.Asks(context.Background(), team, mailbox.AskAwaiting)
			if err != nil {
				return err
			}
			if len(asks) != n {
				return fmt.Errorf("team %s: %d questions asked, want %d", team, len(asks), n)
			}
			for _, a := range asks {
				if out, err := b.command("ask", "answer", strconv.FormatInt(a.ID, 10), "Green.").CombinedOutput(); err != nil {
					return fmt.Errorf("ask answer %d: %v: %s", a.ID, err, out)
				}
			}
			start := time.Now()
			out, err := b.command("resume", team, "--parallel", strconv.Itoa(parallel)).Output()
			took := time.Since(start)
			if err != nil {
				return fmt.Errorf("resume %s: %v: %s", team, err, out)
			}
			fmt.Printf("%-9s --parallel %-2d %d answers: pass %v, %d re-spawned ready\n", ty, parallel, n,
				took.Round(10*time.Millisecond), len(resumedReady.FindAll(out, -1)))
		}
	}
	return nil
}
