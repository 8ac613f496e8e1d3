package briefing

import (
	"errors"
	"strings"
	"testing"

	"github.com/teamkit/teamkit/pkg/readlimit"
)

const onlyCore = `{{template "teamkit" .}}`

func data() Data {
	return Data{Team: "alpha", Name: "w1", Type: "codex", Run: "r-42", Task: "fix the bug"}
}

func render(t *testing.T, tmpl string, d Data) string {
	t.Helper()
	out, err := Render("test/template.md", tmpl, d)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestRenderCore(t *testing.T) {
	out := render(t, onlyCore, data())
	for _, want := range []string{
		"**w1** (type codex) in the team **alpha**, run r-42",
		"`ready mark`",
		"Drain your inbox NOW: run `inbox`",
		"queued for you before you\n   attached",
		"## Your task\n\nfix the bug\n",
		"run `inbox` again",
		`inbox send alpha <recipient> -- "your reply"`,
		"Nothing will push new messages to you",
		"poll it",
		"`ask \"your question\"` and then exit cleanly",
		"Never wait for the answer",
		"fresh spawn",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("briefing lacks %q:\n%s", want, out)
		}
	}
	for _, unwanted := range []string{"GitHub issue", "A monitor pushes", "/state/teamkit.db", "<no value>"} {
		if strings.Contains(out, unwanted) {
			t.Errorf("briefing holds %q:\n%s", unwanted, out)
		}
	}
	// The steps come in the order an agent must take them.
	ready, drain, task, ask := strings.Index(out, "`ready mark`"), strings.Index(out, "Drain your inbox NOW"),
		strings.Index(out, "## Your task"), strings.Index(out, "`ask \"your question\"`")
	if !(ready < drain && drain < task && task < ask) {
		t.Errorf("steps out of order (ready %d, drain %d, task %d, ask %d):\n%s", ready, drain, task, ask, out)
	}
}

func TestRenderIssueAndMonitor(t *testing.T) {
	d := data()
	d.Issue = "acme/widgets#17"
	d.Monitor = true
	out := render(t, onlyCore, d)
	if !strings.Contains(out, "GitHub issue acme/widgets#17") {
		t.Errorf("briefing does not name the issue:\n%s", out)
	}
	if !strings.Contains(out, "A monitor pushes new messages") || strings.Contains(out, "Nothing will push") {
		t.Errorf("briefing with a monitor says the wrong thing:\n%s", out)
	}
}

func TestRenderWithoutTask(t *testing.T) {
	d := data()
	d.Task = ""
	out := render(t, onlyCore, d)
	if strings.Contains(out, "## Your task") || strings.Contains(out, "your task (below)") {
		t.Errorf("briefing without a task still mentions one:\n%s", out)
	}
	if !strings.Contains(out, "the work your inbox gave you") {
		t.Errorf("briefing without a task does not point at the inbox:\n%s", out)
	}
}

func TestRenderTaskByteExact(t *testing.T) {
	tasks := []string{
		"$(rm -rf /)",
		"`id` and 'single' and \"double\"; echo pwned; \\ backslash",
		"multi\nline\n\ttabbed\r\nand crlf",
		"{{.Team}} {{template \"teamkit\" .}} {{end}} }}{{",
		"<script>alert(1)</script> & &amp; %s %v %!",
		"non-ASCII: héllo wörld 日本語 🚀 \u202e",
		"ends with newline\n",
		"   leading and trailing blanks   ",
		strings.Repeat("0123456789abcdef$`\"'\\{}\n", 100*1024/24+1),
	}
	for _, task := range tasks {
		d := data()
		d.Task = task
		out := render(t, onlyCore, d)
		head := "## Your task\n\n"
		i := strings.Index(out, head)
		if i < 0 {
			t.Fatalf("no task section for %.40q", task)
		}
		rest := out[i+len(head):]
		if !strings.HasPrefix(rest, task) {
			t.Errorf("task %.60q not reproduced byte for byte; got %.60q", task, rest)
		}
		if !strings.HasPrefix(rest[len(task):], "\n\n## Your inbox") {
			t.Errorf("task %.40q not followed by the inbox section: %.60q", task, rest[len(task):])
		}
	}
}

func TestRenderTypeTemplate(t *testing.T) {
	out := render(t, "Before.\n{{template \"teamkit\" .}}\nHint for {{.Type}} in {{.Team}}.\n", data())
	if !strings.HasPrefix(out, "Before.\n# Your teamkit briefing") {
		t.Errorf("type text before the core misplaced:\n%.80s", out)
	}
	if !strings.HasSuffix(out, "Hint for codex in alpha.\n") {
		t.Errorf("type hint missing:\n%s", out)
	}
}

func TestRenderTemplatesDoNotLeak(t *testing.T) {
	// A definition in one type's template must not be visible to the next.
	if _, err := Render("a", `{{define "extra"}}A{{end}}{{template "extra"}}`, data()); err != nil {
		t.Fatal(err)
	}
	if _, err := Render("b", `{{template "extra"}}`, data()); err == nil {
		t.Error(`template "extra" from an earlier Render was visible to a later one`)
	}
}

func TestRenderErrors(t *testing.T) {
	tests := []struct{ tmpl, want string }{
		{"{{.Nope}}", "Nope"},
		{"{{if}}", "missing value for if"},
		{"{{template \"missing\" .}}", "missing"},
		{"{{.Task", "unclosed action"},
		{"{{index .Team 99}}", "index out of range"},
		// The mailbox (a URL may hold a password) is no template's to print.
		{"{{.DB}}", "DB"},
		{"", "empty briefing"},
		{"  {{/* only a comment */}}\n", "empty briefing"},
		{`{{if false}}x{{end}}`, "empty briefing"},
	}
	for _, tt := range tests {
		_, err := Render("types/x/template.md", tt.tmpl, data())
		if err == nil {
			t.Errorf("Render(%q) succeeded", tt.tmpl)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, "briefing template types/x/template.md") || !strings.Contains(msg, tt.want) {
			t.Errorf("Render(%q) error %q, want one naming the template and saying %q", tt.tmpl, msg, tt.want)
		}
	}
}

// TestRenderCommands: the briefing spells the teamkit commands as spawn
// resolved them, everywhere it tells the agent to run one, and says why.
func TestRenderCommands(t *testing.T) {
	d := data()
	d.Commands = Commands{Ready: "/opt/tk/ready", Inbox: "/opt/tk/inbox", Ask: "/opt/tk/ask"}
	out := render(t, onlyCore, d)
	for _, want := range []string{
		"Run `/opt/tk/ready mark`",
		"Drain your inbox NOW: run `/opt/tk/inbox`",
		"run `/opt/tk/inbox` again",
		`/opt/tk/inbox send alpha <recipient> -- "your reply"`,
		"`/opt/tk/ask \"your question\"` and then exit cleanly",
		"may\nnot have them on its PATH",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("briefing lacks %q:\n%s", want, out)
		}
	}
	for _, bare := range []string{"`ready mark`", "run `inbox`", "`ask \""} {
		if strings.Contains(out, bare) {
			t.Errorf("briefing still spells %q bare:\n%s", bare, out)
		}
	}
	if strings.Contains(render(t, onlyCore, data()), "PATH") {
		t.Errorf("a briefing with bare command names explains full paths")
	}
}

func TestRenderBounded(t *testing.T) {
	_, err := Render("loop.md", `{{range 4000000}}0123456789{{end}}`, Data{Team: "t", Name: "w1"})
	var big *readlimit.TooLargeError
	if !errors.As(err, &big) || !strings.Contains(err.Error(), "loop.md: its output is larger than 32 MiB") {
		t.Fatalf("Render of a 40 MB loop = %v, want a TooLargeError", err)
	}
	// A task at the mailbox's limit still fits, with the instructions.
	if _, err := Render("task.md", `{{template "teamkit" .}}`, Data{Team: "t", Name: "w1", Task: strings.Repeat("x", 16<<20)}); err != nil {
		t.Fatalf("Render of a 16 MiB task: %v", err)
	}
}

// TestRenderBOMOnlyIsBlank: a template.md saved empty by an editor that
// writes a byte-order mark (type.conf's parser strips one for that reason)
// renders a briefing with nothing in it but the mark. Render promises that
// a blank briefing is an error, not an agent started with no idea who it is.
func TestRenderBOMOnlyIsBlank(t *testing.T) {
	for _, tmpl := range []string{"\ufeff", "\ufeff\r\n"} {
		if out, err := Render("test/template.md", tmpl, data()); err == nil {
			t.Errorf("template %q rendered briefing %q and no error; want the blank-briefing error", tmpl, out)
		}
	}
	if out, err := Render("test/template.md", "\ufeffHello.\n{{template \"teamkit\" .}}", data()); err != nil || strings.Contains(out, "\ufeff") {
		t.Errorf("a template with a byte-order mark rendered %q, %v: the mark reached the briefing", out, err)
	}
}
