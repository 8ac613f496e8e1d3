package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// A package that timed out: the panic went to the output of the test that
// hung, which never ended. The summary names it, and of the dump keeps
// the goroutines with a frame in this module.
func TestTimeoutNamesTheHungTest(t *testing.T) {
	var in strings.Builder
	emit := func(action, test, output string) {
		b, _ := json.Marshal(event{Action: action, Package: module, Test: test, Output: output})
		in.Write(append(b, '\n'))
	}
	emit("run", "TestQuick", "")
	emit("pass", "TestQuick", "")
	emit("run", "TestHangs", "")
	for _, l := range []string{
		"=== RUN   TestHangs\n",
		"    hangs_test.go:9: waiting on the agent\n",
		"panic: test timed out after 25m0s\n",
		"\trunning tests:\n",
		"\t\tTestHangs (25m0s)\n",
		"\n",
		"goroutine 7 [select]:\n",
		"net/http.(*persistConn).writeLoop(0xc000)\n",
		"\n",
		"goroutine 9 [chan receive]:\n",
		module + "_test.TestHangs(0xc000)\n",
		"\t/src/hangs_test.go:10 +0x25\n",
	} {
		emit("output", "TestHangs", l)
	}
	emit("output", "", "FAIL\t"+module+"\t1500.0s\n")
	emit("fail", "", "")
	var out strings.Builder
	s, err := read(strings.NewReader(in.String()), &out)
	if err != nil {
		t.Fatal(err)
	}
	s.print(&out, "tests")
	got := out.String()
	for _, want := range []string{
		"waiting on the agent",
		"\t\tTestHangs (25m0s)\n",
		module + "_test.TestHangs(0xc000)",
		"(1 goroutines with no frame in " + module + " left out)",
		"tests: 1 passed, 0 failed, 0 skipped\n",
		"   UNFINISHED " + module + " TestHangs (still running when its package failed)\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the summary lacks %q:\n%s", want, got)
		}
	}
	for _, unwanted := range []string{"writeLoop", "=== RUN", "UNFINISHED " + module + " TestQuick"} {
		if strings.Contains(got, unwanted) {
			t.Errorf("the summary has %q:\n%s", unwanted, got)
		}
	}
}
