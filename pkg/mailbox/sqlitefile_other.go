//go:build !windows

package mailbox

import "path/filepath"

// sqliteFile is the file SQLite opens for path, after which it names the
// WAL: SQLite's Unix VFS resolves every link in a path (unixFullPathname),
// and so does this.
func sqliteFile(path string) string {
	if f, err := filepath.EvalSymlinks(path); err == nil {
		return f
	}
	return path
}
