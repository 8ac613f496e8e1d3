package mailbox

// sqliteFile is the file SQLite opens for path, after which it names the
// WAL: on Windows, path as given. SQLite's Windows VFS takes the full path
// name without following links (winFullPathname), so the WAL of a mailbox
// named through a link lies beside the link.
func sqliteFile(path string) string { return path }
