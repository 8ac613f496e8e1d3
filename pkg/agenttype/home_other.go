//go:build !windows

package agenttype

// osHomeVar is "": HOME is the only home.
const osHomeVar = ""
