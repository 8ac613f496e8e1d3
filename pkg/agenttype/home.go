package agenttype

// Home is the user's home as a type's paths mean it (the user's types
// directory, a `~` in auth_file): $HOME, else, on Windows, %USERPROFILE%,
// where the agent CLIs keep their logins: only Git Bash sets HOME, not
// cmd.exe, PowerShell or Task Scheduler. "" when there is neither.
func Home(getenv func(string) string) string {
	if h := getenv("HOME"); h != "" || osHomeVar == "" {
		return h
	}
	return getenv(osHomeVar)
}
