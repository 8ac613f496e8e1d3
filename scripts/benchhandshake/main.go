// Command benchhandshake measures how long after an agent's `ready mark`
// spawn notices it and returns, over real processes: it spawns a tiny agent
// type that marks at once, N times, and reads the mark's marked_at and
// consumed_at (set by spawn when it observed the mark) from the mailbox.
//
//	go run ./scripts/benchhandshake -n 30     (spawn and ready must be on PATH)
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"time"

	"github.com/teamkit/teamkit/pkg/mailbox"
)

const typeConf = `# marks ready at once, then lingers so spawn sees the mark, not the exit
command=sh -c 'ready mark >/dev/null && sleep 2'
boot=stdin
handshake=actas
`

func main() {
	n := flag.Int("n", 30, "spawns to time")
	flag.Parse()
	if err := run(*n); err != nil {
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
