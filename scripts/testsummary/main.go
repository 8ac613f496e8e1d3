// Command testsummary reads `go test -json` on stdin and says what ran: it
// passes through the output of whatever failed, then closes with one
// summary of the packages and tests that passed, failed and were skipped,
// each skip with its reason, so `make test` shows what it did not test
// without -v. A test still running when its package failed (go test's
// -timeout: the test hung) is named as unfinished, with its output and the
// goroutines of this module from the timeout's dump. It exits 1 when
// anything failed (or nothing ran).
//
//	go test -json ./... | go run ./scripts/testsummary [-label NAME]
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
)

type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64
}

// fileLine is the "name_test.go:12: " prefix t.Log puts before a line.
var fileLine = regexp.MustCompile(`^\s*[\w.-]+\.go:\d+: `)

type summary struct {
	pkgPass, pkgFail, pkgNoTests int
	pass, fail                   int
	skips                        map[string][]string // reason -> tests
	failed                       []string
	unfinished                   []string // tests running when their package failed
	elapsed                      float64
	slowPkg                      string // the package that took longest, and how long
	slowPkgElapsed               float64
}

func main() {
	label := flag.String("label", "tests", "what the summary line calls this run")
	flag.Parse()
	s, err := read(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(1)
	}
	s.print(os.Stdout, *label)
	if s.pkgFail > 0 || s.fail > 0 || s.pkgPass+s.pkgNoTests == 0 {
		os.Exit(1)
	}
}

func read(r io.Reader, out io.Writer) (*summary, error) {
	s := &summary{skips: map[string][]string{}}
	logs := map[string][]string{} // package/test -> output lines
	var running []string          // package/test keys running (not paused in t.Parallel)
	timedOut := map[string]bool{} // packages whose timeout panic has begun
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if json.Unmarshal(line, &e) != nil || e.Action == "" {
			fmt.Fprintln(out, string(line)) // go's own messages (a build error)
			continue
		}
		key := e.Package + " " + e.Test
		switch e.Action {
		case "pass", "fail", "skip", "pause":
			running = slices.DeleteFunc(running, func(k string) bool { return k == key })
		}
		switch e.Action {
		case "run", "cont":
			running = append(running, key)
		case "output", "build-output":
			// A timeout's panic, and the goroutine dump after it, go
			// to whichever test printed last (one that passed, even):
			// they are the package's.
			if strings.HasPrefix(e.Output, "panic: test timed out after ") {
				timedOut[e.Package] = true
			}
			if timedOut[e.Package] {
				key = e.Package + " "
			}
			logs[key] = append(logs[key], e.Output)
		case "pass":
			if e.Test == "" {
				s.pkgPass++
				s.elapsed += e.Elapsed
				if e.Elapsed > s.slowPkgElapsed {
					s.slowPkg, s.slowPkgElapsed = e.Package, e.Elapsed
				}
			} else {
				s.pass++
			}
			delete(logs, key)
		case "skip":
			if e.Test == "" {
				s.pkgNoTests++
			} else if !strings.Contains(e.Test, "/") || !s.parentSkipped(e.Test) {
				reason := skipReason(logs[key])
				s.skips[reason] = append(s.skips[reason], e.Test)
			}
			delete(logs, key)
		case "fail", "build-fail":
			if e.Test != "" {
				s.fail++
				s.failed = append(s.failed, key)
				printLogs(out, logs[key])
				delete(logs, key)
				break
			}
			s.pkgFail++
			s.elapsed += e.Elapsed
			// Tests that never ended: the hung ones, which the
			// timeout's panic names (else those running at the end).
			var left []string
			running = slices.DeleteFunc(running, func(k string) bool {
				if pkg, test, _ := strings.Cut(k, " "); pkg == e.Package {
					left = append(left, test)
					return true
				}
				return false
			})
			if named := runningTests(logs[key]); len(named) > 0 {
				left = named
			}
			for _, test := range leaves(left) {
				k := e.Package + " " + test
				s.unfinished = append(s.unfinished, k)
				printLogs(out, logs[k])
			}
			for k := range logs {
				if strings.HasPrefix(k, e.Package+" ") && k != key {
					delete(logs, k)
				}
			}
			printLogs(out, ourGoroutines(logs[key]))
			delete(logs, key)
		}
	}
	return s, sc.Err()
}

// runningTests are the tests a timeout's panic lists as running:
//
//	panic: test timed out after 30m0s
//		running tests:
//			TestX (30m0s)
func runningTests(lines []string) []string {
	var tests []string
	in := false
	for _, l := range lines {
		switch {
		case strings.TrimSpace(l) == "running tests:":
			in = true
		case in && strings.HasPrefix(l, "\t\t"):
			name, _, _ := strings.Cut(strings.TrimSpace(l), " ")
			tests = append(tests, name)
		case in:
			return tests
		}
	}
	return tests
}

// leaves are the tests of tests that have no subtest among them: a hung
// subtest's parents wait on it, and add nothing to its name.
func leaves(tests []string) []string {
	var out []string
	for _, t := range tests {
		if !slices.ContainsFunc(tests, func(u string) bool { return strings.HasPrefix(u, t+"/") }) {
			out = append(out, t)
		}
	}
	return out
}

func printLogs(out io.Writer, lines []string) {
	for _, l := range lines {
		if !strings.HasPrefix(l, "=== ") { // RUN, PAUSE, CONT: noise without -v
			io.WriteString(out, l)
		}
	}
}

// module marks a goroutine of this module's code in a timeout's dump.
const module = "github.com/teamkit/teamkit"

// ourGoroutines keeps, of a timeout's goroutine dump in lines, the
// goroutines with a frame in this module's code (what the hung test waits
// on) but for tests paused in t.Parallel (they wait on the hung one), and
// says how many others it left out: the whole dump of a big package is
// thousands of lines of runtime and library waits.
func ourGoroutines(lines []string) []string {
	var kept, block []string
	left, inDump := 0, false
	flush := func() {
		if len(block) == 0 {
			return
		}
		ours := slices.ContainsFunc(block, func(l string) bool { return strings.Contains(l, module) })
		if ours && !slices.ContainsFunc(block, func(l string) bool { return strings.HasPrefix(l, "testing.(*T).Parallel(") }) {
			kept = append(kept, block...)
		} else {
			left++
		}
		block = nil
	}
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "goroutine "):
			flush()
			inDump = true
			block = append(block, l)
		case inDump && strings.TrimSpace(l) == "":
			block = append(block, l)
			flush()
		case inDump:
			block = append(block, l)
		default:
			kept = append(kept, l)
		}
	}
	flush()
	if left > 0 {
		kept = append(kept, fmt.Sprintf("(%d other goroutines left out: the runtime's, libraries', tests waiting in t.Parallel)\n", left))
	}
	return kept
}

// parentSkipped reports whether a skipped subtest's parent was skipped
// too, which already says why.
func (s *summary) parentSkipped(test string) bool {
	parent := test[:strings.LastIndexByte(test, '/')]
	for _, tests := range s.skips {
		for _, t := range tests {
			if t == parent {
				return true
			}
		}
	}
	return false
}

// skipReason is the last line a skipped test logged before its SKIP line,
// without the file:line prefix.
func skipReason(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.HasPrefix(l, "--- SKIP") || strings.HasPrefix(l, "=== ") {
			continue
		}
		return strings.TrimSpace(fileLine.ReplaceAllString(lines[i], ""))
	}
	return "(no reason given)"
}

func (s *summary) print(w io.Writer, label string) {
	nskip := 0
	for _, t := range s.skips {
		nskip += len(t)
	}
	fmt.Fprintf(w, "\n== %s: %d packages ok, %d failed, %d without tests; %d tests passed, %d failed, %d skipped (%.0fs of package time)\n",
		label, s.pkgPass, s.pkgFail, s.pkgNoTests, s.pass, s.fail, nskip, s.elapsed)
	// The plain closing line CI's readers look for.
	fmt.Fprintf(w, "tests: %d passed, %d failed, %d skipped\n", s.pass, s.fail, nskip)
	if s.slowPkg != "" {
		// Packages run side by side: the longest is what the run waited for.
		fmt.Fprintf(w, "   longest package: %s, %.0fs\n", s.slowPkg, s.slowPkgElapsed)
	}
	for _, f := range s.failed {
		fmt.Fprintf(w, "   FAILED %s\n", f)
	}
	for _, f := range s.unfinished {
		fmt.Fprintf(w, "   UNFINISHED %s (still running when its package failed)\n", f)
	}
	reasons := make([]string, 0, len(s.skips))
	for r := range s.skips {
		reasons = append(reasons, r)
	}
	sort.Strings(reasons)
	for _, r := range reasons {
		tests := s.skips[r]
		sort.Strings(tests)
		shown := tests
		if len(shown) > 4 {
			shown = append(shown[:4:4], fmt.Sprintf("and %d more", len(tests)-4))
		}
		fmt.Fprintf(w, "   skipped %s: %s\n", strings.Join(shown, ", "), r)
	}
}
