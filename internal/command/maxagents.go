package command

import "strconv"

// MaxAgents is the cap on the agents running on this host that spawn and
// resume apply: flag when the command has one and it was given (spawn
// --max-running, 1 or more), else TEAMKIT_MAX_AGENTS; 0 when neither sets
// one.
func MaxAgents(env *Env, flag int, given bool) (int, error) {
	if given {
		if flag < 1 {
			return 0, Usagef("--max-running %d: want a number of agents, 1 or more", flag)
		}
		return flag, nil
	}
	s := env.Getenv("TEAMKIT_MAX_AGENTS")
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, Usagef("TEAMKIT_MAX_AGENTS=%q: want a number of agents, 1 or more", s)
	}
	return n, nil
}
