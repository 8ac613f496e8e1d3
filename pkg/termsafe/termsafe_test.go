package termsafe

import (
	"encoding/json"
	"testing"
)

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"plain text\n\tindented":        "plain text\n\tindented",
		"\x1b]0;pwned\x07":              `^[]0;pwned^G`,
		"\x1b[2J\x1b[H":                 `^[[2J^[[H`,
		"over\rwrite":                   `over^Mwrite`,
		"del\x7f":                       `del^?`,
		"c1 \u009b31m":                  `c1 \u009b31m`,
		"abc\u202edcba":                 `abc\u202edcba`,
		"\u2066iso\u2069 \u200f\u061c":  `\u2066iso\u2069 \u200f\u061c`,
		"é ü 日本":                        "é ü 日本",
		"a\u200bb\u2060c\ufeffd\u00ade": `a\u200bb\u2060c\ufeffd\u00ade`,
		"line\u2028para\u2029":          `line\u2028para\u2029`,
		"hi\U000e0041\U000e0042":        `hi\U000e0041\U000e0042`,
		"x\U000e0100":                   `x\U000e0100`,
		// Variation selectors can carry hidden bytes, one per selector,
		// and the fillers and the grapheme joiner draw nothing.
		"a\ufe00\ufe0f\U000e01ef":           `a\ufe00\ufe0f\U000e01ef`,
		"\u2764\ufe0f":                      "\u2764" + `\ufe0f`,
		"x\u3164y\u034fz\u115f\u1160\uffa0": `x\u3164y\u034fz\u115f\u1160\uffa0`,
		// Joiners build emoji and words.
		"👩\u200d💻": "👩\u200d💻",
	} {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEscapeJSON(t *testing.T) {
	js, _ := json.Marshal(map[string]string{"body": "evil\u202etxt.exe \u2067x \u009b"})
	got := EscapeJSON(js)
	if want := `{"body":"evil\u202etxt.exe \u2067x \u009b"}`; string(got) != want {
		t.Errorf("EscapeJSON = %s, want %s", got, want)
	}
	var back map[string]string
	if err := json.Unmarshal(got, &back); err != nil || back["body"] != "evil\u202etxt.exe \u2067x \u009b" {
		t.Errorf("round trip = %q, %v", back["body"], err)
	}
	hidden := "ok\u200b\U000e0041\u2028"
	js, _ = json.Marshal(map[string]string{"body": hidden})
	got = EscapeJSON(js)
	if want := `{"body":"ok\u200b\udb40\udc41\u2028"}`; string(got) != want {
		t.Errorf("EscapeJSON = %s, want %s", got, want)
	}
	if err := json.Unmarshal(got, &back); err != nil || back["body"] != hidden {
		t.Errorf("round trip = %q, %v", back["body"], err)
	}
	plain := []byte(`{"body":"日本 — ok 👩\u200d💻"}`)
	if got := EscapeJSON(plain); string(got) != string(plain) {
		t.Errorf("EscapeJSON changed %s to %s", plain, got)
	}
}
