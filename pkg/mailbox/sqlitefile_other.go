//go:build !windows

package mailbox

import (
	"path/filepath"
	"strings"
)

// sqliteFile is the file SQLite opens for path, after which it names the
// WAL: SQLite's Unix VFS resolves every link in a path (unixFullPathname),
// and so does this. A file not made yet is its directory, resolved, and its
// name: path's text is split, not cleaned, since a ".." after a linked
// directory goes up from the link's target, as the kernel and SQLite take
// it, where the text alone would drop the link.
func sqliteFile(path string) string {
	if f, err := filepath.EvalSymlinks(path); err == nil {
		return f
	}
	i := strings.LastIndexByte(path, '/')
	if i < 0 {
		return path
	}
	dir, name := path[:i], path[i+1:]
	if dir == "" {
		dir = "/"
	}
	if d, err := filepath.EvalSymlinks(dir); err == nil && name != "" && name != "." && name != ".." {
		return filepath.Join(d, name)
	}
	return path
}
