// Package teamkit is the root of the teamkit module; it holds only the files
// that must be embedded from the top of the tree.
package teamkit

import "embed"

// BuiltinTypes holds the built-in agent types: one directory per type under
// "types/", each with its type.conf, template.md and any files it ships.
//
//go:embed all:types
var BuiltinTypes embed.FS
