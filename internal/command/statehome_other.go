//go:build !windows

package command

// osStateHomeVar is empty: Linux, macOS and FreeBSD follow XDG
// (~/.local/state). macOS's own ~/Library/Application Support would move
// every existing mailbox, and teamkit's users there run it from a terminal,
// where the XDG paths are the expected ones.
const osStateHomeVar = ""
