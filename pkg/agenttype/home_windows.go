package agenttype

// osHomeVar holds the user's home where HOME is unset.
const osHomeVar = "USERPROFILE"
