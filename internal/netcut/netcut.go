// Package netcut lets a test make one TCP connection go silent, as a
// network that drops out does: every packet of it, either way, is dropped,
// and nothing is closed or reset. It needs root and nft (nftables): a test
// that asks without them skips, saying how to enable it, or fails when
// CI=true.
//
//	netcut.Silence(t, clientPort, serverPort) // until t ends
//
// Internal: a test kit; only tests import it.
package netcut

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Howto is the one line printed when a test cannot cut a connection.
const Howto = "tests that cut a network connection skipped: they need root and nft (Debian: apt-get install nftables)"

// expiry bounds a cut whose test never cleaned up (a -timeout, a SIGKILL):
// the rules live in the host's firewall, not in the test binary, and would
// otherwise go on dropping whatever connection next has those two ports.
const expiry = "15m"

// Silence drops every packet, both ways, of the TCP connection between
// ports a and b (its two ends' ports, in either order: the client's and
// the server's), from now until t ends. Matching both ports keeps the cut
// to that connection: the host may have others on either port, another
// test binary's among them. It cuts once nothing of the connection is in
// flight (atRest): an acknowledgement held back a few milliseconds (a
// delayed ACK) and then dropped would leave the other end retransmitting,
// a cut other than the one the test meant.
func Silence(t testing.TB, a, b int) {
	t.Helper()
	if err := available(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("netcut is required when CI=true: %v", err)
		}
		t.Skip(Howto + " (" + err.Error() + ")")
	}
	// Tables are the host's, shared by every test binary running there
	// (and by those of other pid namespaces): the name is random.
	var r [8]byte
	rand.Read(r[:])
	table := "teamkit_netcut_" + hex.EncodeToString(r[:])
	// Both hooks: a remote peer's packets meet input only; between two
	// local ends output comes first.
	rules := fmt.Sprintf(`table inet %[1]s {
	set cut { type inet_service . inet_service; flags timeout; elements = { %[2]d . %[3]d timeout %[4]s, %[3]d . %[2]d timeout %[4]s }; }
	chain out { type filter hook output priority 0; tcp sport . tcp dport @cut drop; }
	chain in { type filter hook input priority 0; tcp sport . tcp dport @cut drop; }
}
`, table, a, b, expiry)
	if err := atRest(a, b); err != nil {
		t.Fatalf("netcut: %v", err)
	}
	if err := nft(rules); err != nil {
		t.Fatalf("netcut: %v", err)
	}
	t.Cleanup(func() {
		if err := nft("delete table inet " + table + "\n"); err != nil {
			t.Errorf("netcut: %v", err)
		}
	})
}

// atRest waits, a minute at most, until no end of the connection between
// ports a and b on this machine has data unacknowledged (tx_queue in
// /proc/net/tcp and tcp6).
func atRest(a, b int) error {
	for deadline := time.Now().Add(time.Minute); ; {
		busy, err := inFlight(a, b)
		if err != nil || !busy {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the connection between ports %d and %d still had data in flight after a minute", a, b)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// inFlight reports whether an end of the connection between ports a and b
// has data unacknowledged.
func inFlight(a, b int) (bool, error) {
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(f)
		if err != nil {
			return false, err
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			// sl local_address rem_address st tx_queue:rx_queue …
			fields := strings.Fields(line)
			if len(fields) < 5 {
				continue
			}
			local, remote := port(fields[1]), port(fields[2])
			if (local != a || remote != b) && (local != b || remote != a) {
				continue
			}
			if tx, _, _ := strings.Cut(fields[4], ":"); strings.Trim(tx, "0") != "" {
				return true, nil
			}
		}
	}
	return false, nil
}

// port is the port of an address of /proc/net/tcp (hex ADDR:PORT).
func port(addr string) int {
	_, hex, _ := strings.Cut(addr, ":")
	p, err := strconv.ParseInt(hex, 16, 32)
	if err != nil {
		return -1
	}
	return int(p)
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
