//go:build !windows

package agenttype

import "io/fs"

// samePerm reports whether a file's permission bits are already want's.
func samePerm(have, want fs.FileMode) bool { return have == want }
