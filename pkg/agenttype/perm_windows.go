package agenttype

import "io/fs"

// samePerm reports whether a file's permission bits, as os.Stat reports
// them, are already want's. Windows keeps only a read-only attribute: Go
// reports 0666 or 0444, and a Chmod to want sets that attribute from want's
// owner-write bit, so that bit alone can differ.
func samePerm(have, want fs.FileMode) bool { return have&0o200 == want&0o200 }
