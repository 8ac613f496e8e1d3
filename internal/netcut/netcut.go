// Package netcut lets a test make one TCP connection go silent, as a
// network that drops out does: every packet of it, either way, is dropped,
// and nothing is closed or reset. It needs root and nft (nftables): a test
// that asks without them skips, saying how to enable it, or fails when
// CI=true.
//
//	netcut.Silence(t, localPort) // until t ends
//
// Internal: a test kit; only tests import it.
package netcut

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
)

// Howto is the one line printed when a test cannot cut a connection.
const Howto = "tests that cut a network connection skipped: they need root and nft (Debian: apt-get install nftables)"

var seq atomic.Int64

// Silence drops every packet, both ways, of the TCP connection whose end on
// this machine is port (its local port, whichever side dialled), from now
// until t ends.
func Silence(t testing.TB, port int) {
	t.Helper()
	if err := available(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("netcut is required when CI=true: %v", err)
		}
		t.Skip(Howto + " (" + err.Error() + ")")
	}
	table := fmt.Sprintf("teamkit_netcut_%d_%d", os.Getpid(), seq.Add(1))
	// Both hooks: a packet between two local ends passes output only, one
	// from a remote peer input only.
	rules := fmt.Sprintf(`table inet %[1]s {
	chain out { type filter hook output priority 0; tcp sport %[2]d drop; tcp dport %[2]d drop; }
	chain in { type filter hook input priority 0; tcp sport %[2]d drop; tcp dport %[2]d drop; }
}
`, table, port)
	if err := nft(rules); err != nil {
		t.Fatalf("netcut: %v", err)
	}
	t.Cleanup(func() {
		if err := nft("delete table inet " + table + "\n"); err != nil {
			t.Errorf("netcut: %v", err)
		}
	})
}

func available() error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("not root")
	}
	_, err := nftPath()
	return err
}

// nftPath is nft on PATH, or in /usr/sbin (not on every root's PATH).
func nftPath() (string, error) {
	if p, err := exec.LookPath("nft"); err == nil {
		return p, nil
	}
	return exec.LookPath("/usr/sbin/nft")
}

// nft runs a ruleset script through nft -f -.
func nft(script string) error {
	p, err := nftPath()
	if err != nil {
		return err
	}
	cmd := exec.Command(p, "-f", "-")
	cmd.Stdin = strings.NewReader(script)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("nft: %v: %s", err, out)
	}
	return nil
}
