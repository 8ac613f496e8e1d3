package spawn

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/teamkit/teamkit/pkg/agenttype"
	"github.com/teamkit/teamkit/pkg/briefing"
)

func TestStopHookArgs(t *testing.T) {
	base := filepath.Join(t.TempDir(), "20260101T000000Z-abcd")
	cmds := briefing.Commands{Ready: "/b/ready", Inbox: "/b/inbox", Ask: "/b/ask"}
	if args, err := stopHookArgs(agenttype.Conf{}, base, cmds, "t", "w"); err != nil || args != nil {
		t.Fatalf("no stop_hook: %q, %v; want nothing", args, err)
	}
	conf := agenttype.Conf{StopHook: agenttype.StopHookClaude, StopHookMax: 3}
	args, err := stopHookArgs(conf, base, cmds, "t", "-w")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"--settings", base + ".settings.json"}; !reflect.DeepEqual(args, want) {
		t.Fatalf("args = %q, want %q", args, want)
	}
	data, err := os.ReadFile(args[1])
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Hooks struct {
			Stop []struct {
				Hooks []struct {
					Type, Command string
					Args          []string
				}
			}
		}
	}
	if err := json.Unmarshal(data, &s); err != nil || len(s.Hooks.Stop) != 1 || len(s.Hooks.Stop[0].Hooks) != 1 {
		t.Fatalf("settings %s: %v", data, err)
	}
	// Exec form: the program and its arguments, which claude runs without a
	// shell; a name after "--" is never taken for a flag.
	h := s.Hooks.Stop[0].Hooks[0]
	wantArgs := []string{"__stop-hook", "--state", base + ".stop-hook", "--max", "3", "--inbox", "/b/inbox", "--", "t", "-w"}
	if h.Type != "command" || h.Command != "/b/inbox" || !reflect.DeepEqual(h.Args, wantArgs) {
		t.Fatalf("hook = %+v, want inbox %q", h, wantArgs)
	}
	if st, _ := os.Stat(args[1]); st.Mode().Perm() != 0o600 {
		t.Fatalf("settings mode %v, want 0600", st.Mode().Perm())
	}
}
