package spawn

import (
	"reflect"
	"regexp"
	"testing"
	"time"

	"github.com/teamkit/teamkit/pkg/agenttype"
)

func TestAgentEnv(t *testing.T) {
	environ := []string{"PATH=/bin", "CLAUDECODE=1", "OPENAI_API_KEY=k", "TEAMKIT_RUN=old", "TEAMKIT_ISSUE=o/r#1", "HOME=/h"}
	conf := agenttype.Conf{UnsetEnv: []string{"CLAUDECODE"}, Env: []agenttype.EnvVar{{Name: "MODE", Value: "x"}, {Name: "HOME", Value: "/agent"}}}
	got := AgentEnv(environ, conf, map[string]string{"TEAMKIT_DB": "/db", "TEAMKIT_TEAM": "t", "TEAMKIT_AGENT": "w", "TEAMKIT_RUN": "new"})
	want := []string{"PATH=/bin", "OPENAI_API_KEY=k", "TEAMKIT_RUN=new", "HOME=/agent", "MODE=x", "TEAMKIT_DB=/db", "TEAMKIT_TEAM=t", "TEAMKIT_AGENT=w"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("AgentEnv =\n %q\nwant\n %q", got, want)
	}
}

func TestNewRun(t *testing.T) {
	now := time.Date(2026, 12, 2, 14, 0, 0, 0, time.UTC)
	a, b := NewRun(now), NewRun(now)
	if a == b {
		t.Fatalf("two runs at the same instant share an id: %s", a)
	}
	if !regexp.MustCompile(`^20261202T140000Z-[0-9a-f]{8}$`).MatchString(a) {
		t.Fatalf("run id %q is not time-sortable with a random tail", a)
	}
}
