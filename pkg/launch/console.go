package launch

import (
	"io"
	"os/exec"
	"time"
)

// consoleDrain is how long, once the agent has ended, its output is still
// copied to the console and the log: a process it left running may hold
// the pipe open, and the run's end must not wait for that process.
const consoleDrain = 2 * time.Second

// onConsole shows the agent of a console or wt run on the supervisor's own
// console while its output also goes to the run's log, which spawn reads
// (the handshake's last output, offline detection, spawn's tail): the
// agent writes to a pipe, and the supervisor copies what arrives to both.
// The agent reads the console's keyboard. It returns what closes the files
// it opened.
//
// The console is opened by name (CONOUT$, CONIN$), not taken from the
// supervisor's standard handles: a console launch points those at the log,
// so that the supervisor's own errors are kept after its window closes.
//
// The cost of the copy: the agent sees a pipe, not a console, on its
// output, as in the background; agent CLIs then print plain text rather
// than draw a full-screen interface.
func onConsole(spec Spec, cmd *exec.Cmd) (closeAll func()) {
	var files []io.Closer
	in, out, err := openConsole()
	if err != nil {
		note(spec, "the agent's output goes to the log only: %v", err)
	} else {
		files = append(files, in, out)
		cmd.Stdin = in
	}
	w := &tee{}
	if out != nil {
		w.console = out
	}
	if log, err := openLog(spec.Log); err != nil {
		note(spec, "the agent's output is not logged: %v", err)
	} else {
		files = append(files, log)
		w.log = log
	}
	cmd.Stdout, cmd.Stderr = w, w
	cmd.WaitDelay = consoleDrain
	return func() {
		for _, f := range files {
			f.Close()
		}
	}
}

// tee writes the agent's output to the log, then to the console. It never
// fails: a full disk or a closed window must not block or end the agent
// (its output would stop with a broken pipe).
type tee struct {
	log, console io.Writer
}

func (t *tee) Write(p []byte) (int, error) {
	if t.log != nil {
		t.log.Write(p)
	}
	if t.console != nil {
		t.console.Write(p)
	}
	return len(p), nil
}
