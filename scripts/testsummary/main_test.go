package main

import (
	"os"
	"strings"
	"testing"
)

// testdata/hang.json is go test -json of testdata/hangfixture, whose
// packages hang at -timeout 2s (regenerate there with
// `go test -json -timeout 2s ./... > ../hang.json`): in par a parallel test
// hangs while another passes after it, so the timeout's panic follows the
// passing test's output; in seq a subtest hangs while two parallel tests
// wait in t.Parallel. The summary names the hung tests alone, with their
// output, the panic and their goroutines, and what passed as passed.
func TestTimeoutNamesTheHungTests(t *testing.T) {
	in, err := os.Open("testdata/hang.json")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var out strings.Builder
	s, err := read(in, &out)
	if err != nil {
		t.Fatal(err)
	}
	s.print(&out, "tests")
	got := out.String()
	fixture := module + "/hangfixture/"
	for _, want := range []string{
		"par_test.go:12: waiting on the agent",
		"seq_test.go:12: waiting on the lock",
		"panic: test timed out after 2s",
		"\t\tTestHang (2s)\n",
		"\t\tTestSub/one (2s)\n",
		fixture + "par.TestHang(",
		fixture + "seq.TestSub.func1(",
		"tests: 2 passed, 0 failed, 0 skipped\n",
		"   UNFINISHED " + fixture + "par TestHang (still running when its package failed)\n",
		"   UNFINISHED " + fixture + "seq TestSub/one (still running when its package failed)\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the summary lacks %q", want)
		}
	}
	for _, unwanted := range []string{
		"=== RUN",
		"slow but done", // TestSlow passed
		"UNFINISHED " + fixture + "par TestSlow",
		"UNFINISHED " + fixture + "seq TestSub ",
		"UNFINISHED " + fixture + "seq TestPar",
		"seq.TestPar1(", // waiting in t.Parallel
		"runtime.gopark",
	} {
		if strings.Contains(got, unwanted) {
			t.Errorf("the summary has %q", unwanted)
		}
	}
	if t.Failed() {
		t.Logf("the summary:\n%s", got)
	}
}
