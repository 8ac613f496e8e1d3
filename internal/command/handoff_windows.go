package command

import (
	"errors"
	"os"
	"os/exec"
)

const exeSuffix = ".exe"

// run runs path as a child with this process's streams and returns its
// exit status (Windows has no exec).
func run(path string, argv []string) (int, error) {
	cmd := exec.Command(path, argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), nil
	}
	return 0, err
}
