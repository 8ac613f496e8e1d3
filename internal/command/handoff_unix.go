//go:build unix

package command

import "syscall"

const exeSuffix = ""

// run replaces this process with path: the same pid, streams, signals and
// exit status, as if the user had run it. It returns only on failure.
func run(path string, argv []string) (int, error) {
	return 0, syscall.Exec(path, argv, syscall.Environ())
}
