// Command benchhandshake measures spawn's handshake over real processes.
//
// By default: how long after an agent's `ready mark` spawn notices it and
// returns. It spawns a tiny agent type that marks at once, N times, and reads
// the mark's marked_at and consumed_at (set by spawn when it observed the
// mark) from the mailbox.
//
// With -agents: spawn-to-ready of the built-in AI types with their real CLIs
// against the scripted model server (pkg/modeltest) — the after= spawn
// reports, N spawns per type, one at a time, each agent let finish before
// the next starts. The CLIs are looked for in -clis (make agent-clis puts
// them there).
//
//	go run ./scripts/benchhandshake -n 30     (spawn and ready must be on PATH)
//	go run ./scripts/benchhandshake -agents claude,codex,gemini,opencode -n 5
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

	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/modeltest"
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
	flag.Parse()
	var err error
	if *agents != "" {
		err = runAgents(strings.Split(*agents, ","), *n, *clis)
	} else {
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

// runAgents times spawn-to-ready of each type with its real CLI.
func runAgents(types []string, n int, clis string) error {
	dir, err := os.MkdirTemp("", "teamkit-agents")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	srv, err := modeltest.New(modeltest.Teamkit)
	if err != nil {
		return err
	}
	defer srv.Close()
	srv.Marker = modeltest.BriefingMarker
	home, config := filepath.Join(dir, "home"), filepath.Join(dir, "config")
	modelEnv, err := srv.Configure(home, config)
	if err != nil {
		return err
	}
	dbPath := filepath.Join(dir, "team.db")
	env := append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+config, "XDG_STATE_HOME="+filepath.Join(dir, "state"),
		"TEAMKIT_DB="+dbPath, "PATH="+clis+string(filepath.ListSeparator)+os.Getenv("PATH"))
	env = append(env, modelEnv...)
	work := filepath.Join(dir, "work")
	os.MkdirAll(work, 0o755)
	db, err := mailbox.Open(context.Background(), dbPath, mailbox.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	fmt.Printf("spawns per type: %d, one at a time\n", n)
	for _, ty := range types {
		var ready []time.Duration
		for i := 0; i < n; i++ {
			name := fmt.Sprintf("%s-%d", ty, i)
			cmd := exec.Command("spawn", ty, name, "--team", "bench", "--timeout", "120s")
			cmd.Env, cmd.Dir = env, work
			out, err := cmd.Output()
			m := after.FindSubmatch(out)
			if err != nil || m == nil {
				return fmt.Errorf("spawn %s: %v: %s", name, err, out)
			}
			s, _ := strconv.ParseFloat(string(m[1]), 64)
			ready = append(ready, time.Duration(s*float64(time.Second)))
			// Let it finish (it asks, then exits) before the next one starts.
			for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
				a, err := db.Agent(context.Background(), "bench", name)
				if err == nil && a.ExitCode != nil {
					break
				}
			}
		}
		fmt.Printf("%-9s spawn → status=ready: median %v, min %v, max %v\n", ty, pct(ready, 50), pct(ready, 0), pct(ready, 100))
	}
	return nil
}
