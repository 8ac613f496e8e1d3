//go:build unix

package launch

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/teamkit/teamkit/pkg/runstream"
)

// BenchmarkStream1000 is the supervisor's work for 1,000 events of a
// claude stream: parse each, write its text to the log and the raw line
// beside it (one op = 1,000 events).
func BenchmarkStream1000(b *testing.B) {
	dir := b.TempDir()
	in := claudeEvents(1000)
	b.SetBytes(int64(len(in)))
	log, err := os.Create(filepath.Join(dir, "r.log"))
	if err != nil {
		b.Fatal(err)
	}
	defer log.Close()
	spec := Spec{Output: runstream.Claude, Log: log.Name()}
	start := cpuTime(b)
	b.ResetTimer()
	for range b.N {
		s := readStream(spec, bytes.NewReader(in), log)
		<-s.done
	}
	b.StopTimer()
	// CPU, not wall time: the machine may be busy with other work.
	b.ReportMetric(float64((cpuTime(b)-start).Microseconds())/1000/float64(b.N), "cpu-ms/1000events")
}

// cpuTime is the CPU (user and system) this process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
