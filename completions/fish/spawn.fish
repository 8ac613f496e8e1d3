# spawn fish shell completion

function __fish_spawn_no_subcommand --description 'Test if there has been any subcommand yet'
    for i in (commandline -opc)
        if contains -- $i list runs log stop completion
            return 1
        end
    end
    return 0
end

complete -c spawn -n '__fish_spawn_no_subcommand' -f -l team -r -d 'team `T` (default $TEAMKIT_TEAM)'
complete -c spawn -n '__fish_spawn_no_subcommand' -f -l task -r -d 'the task `TEXT`, placed in the briefing byte for byte'
complete -c spawn -n '__fish_spawn_no_subcommand' -f -l task-file -r -d 'read the task from `FILE` (- for stdin)'
complete -c spawn -n '__fish_spawn_no_subcommand' -f -l issue -r -d 'the GitHub issue the agent works on, `OWNER/REPO#N`'
complete -c spawn -n '__fish_spawn_no_subcommand' -f -l timeout -r -d 'wait at most `D` for the ready mark (60 = 60s, 10m)'
complete -c spawn -n '__fish_spawn_no_subcommand' -f -l workdir -r -d 'the agent\'s working `DIR` (default: the current directory)'
complete -c spawn -n '__fish_spawn_no_subcommand' -f -l replace -d 'stop a live agent of the same name first'
complete -c spawn -n '__fish_spawn_no_subcommand' -f -l no-auth-check -d 'launch even when none of the type\'s keys or login files is found'
complete -c spawn -n '__fish_spawn_no_subcommand' -f -l max-running -r -d 'run at most `N` agents on this host; beyond, wait in the queue (default $TEAMKIT_MAX_AGENTS, else no cap)'
complete -c spawn -n '__fish_spawn_no_subcommand' -f -l no-wait -d 'under a cap, return status=queued at once when no slot is free'
complete -c spawn -n '__fish_spawn_no_subcommand' -f -l worktree -d 'run the agent in a git worktree of its own, on branch teamkit/<team>/<name>, made from the workdir\'s repository'
complete -c spawn -n '__fish_spawn_no_subcommand' -f -l wake -d 'wake on mail: once the run has ended normally, new mail to the agent re-spawns it (by resume <team>; also type.conf wake=mail)'
complete -c spawn -n '__fish_spawn_no_subcommand' -f -l budget-tokens -r -d 'stop each run once it has used `N` tokens (input, output and cache) and ask a decider whether to go on (default type.conf budget_tokens, else $TEAMKIT_BUDGET_TOKENS)'
complete -c spawn -n '__fish_spawn_no_subcommand' -f -l budget-usd -r -d 'stop each run once the CLI reports it cost `X` US dollars and ask a decider whether to go on (default type.conf budget_usd, else $TEAMKIT_BUDGET_USD)'
complete -c spawn -n '__fish_spawn_no_subcommand' -f -l grace -r -d 'give a stopped agent `D` between SIGTERM and SIGKILL (10 = 10s)'
complete -c spawn -n '__fish_spawn_no_subcommand' -f -l db -r -d 'mailbox: a SQLite file `PATH` or a postgres:// URL (default $TEAMKIT_DB, else $XDG_STATE_HOME/teamkit/teamkit.db)'
complete -c spawn -n '__fish_spawn_no_subcommand' -f -l json -d 'print JSON, one object per line'
complete -c spawn -n '__fish_spawn_no_subcommand' -f -l help -s h -d 'show help'
complete -c spawn -n '__fish_spawn_no_subcommand' -f -l version -d 'print the version and exit'
complete -c spawn -n '__fish_seen_subcommand_from list' -f -l help -s h -d 'show help'
complete -r -c spawn -n '__fish_spawn_no_subcommand' -a 'list' -d 'the team\'s agents: state, pid, unread work, open question, log'
complete -c spawn -n '__fish_seen_subcommand_from list' -f -l watch -s w -d 'redraw the table until interrupted'
complete -c spawn -n '__fish_seen_subcommand_from list' -f -l interval -r -d 'redraw --watch\'s table at least every `D` (2 = 2s, 500ms)'
complete -c spawn -n '__fish_seen_subcommand_from list' -f -l db -r -d 'mailbox: a SQLite file `PATH` or a postgres:// URL (default $TEAMKIT_DB, else $XDG_STATE_HOME/teamkit/teamkit.db)'
complete -c spawn -n '__fish_seen_subcommand_from list' -f -l json -d 'print JSON, one object per line'
complete -c spawn -n '__fish_seen_subcommand_from runs' -f -l help -s h -d 'show help'
complete -r -c spawn -n '__fish_spawn_no_subcommand' -a 'runs' -d 'the history of a team\'s (or one agent\'s) runs: how each ended, its tokens and cost, with totals'
complete -c spawn -n '__fish_seen_subcommand_from runs' -f -l db -r -d 'mailbox: a SQLite file `PATH` or a postgres:// URL (default $TEAMKIT_DB, else $XDG_STATE_HOME/teamkit/teamkit.db)'
complete -c spawn -n '__fish_seen_subcommand_from runs' -f -l json -d 'print JSON, one object per line'
complete -c spawn -n '__fish_seen_subcommand_from runs' -f -l since -r -d 'only runs started within this long (24h, 7d)'
complete -c spawn -n '__fish_seen_subcommand_from log' -f -l help -s h -d 'show help'
complete -r -c spawn -n '__fish_spawn_no_subcommand' -a 'log' -d 'print the log of the agent\'s latest run (--follow: until it ends)'
complete -c spawn -n '__fish_seen_subcommand_from log' -f -l db -r -d 'mailbox: a SQLite file `PATH` or a postgres:// URL (default $TEAMKIT_DB, else $XDG_STATE_HOME/teamkit/teamkit.db)'
complete -c spawn -n '__fish_seen_subcommand_from log' -f -l follow -s f -d 'keep printing what is appended, until the run ends'
complete -c spawn -n '__fish_seen_subcommand_from stop' -f -l help -s h -d 'show help'
complete -r -c spawn -n '__fish_spawn_no_subcommand' -a 'stop' -d 'stop an agent (or every agent of a team): SIGTERM to all its processes, SIGKILL after the grace'
complete -c spawn -n '__fish_seen_subcommand_from stop' -f -l all -d 'stop every agent recorded in the team'
complete -c spawn -n '__fish_seen_subcommand_from stop' -f -l clean -d 'remove the agent\'s worktree and branch too, if they hold no work'
complete -c spawn -n '__fish_seen_subcommand_from stop' -f -l grace -r -d 'give a stopped agent `D` between SIGTERM and SIGKILL (10 = 10s)'
complete -c spawn -n '__fish_seen_subcommand_from stop' -f -l db -r -d 'mailbox: a SQLite file `PATH` or a postgres:// URL (default $TEAMKIT_DB, else $XDG_STATE_HOME/teamkit/teamkit.db)'
complete -c spawn -n '__fish_seen_subcommand_from stop' -f -l json -d 'print JSON, one object per line'
complete -c spawn -n '__fish_seen_subcommand_from completion' -f -l help -s h -d 'show help'
complete -r -c spawn -n '__fish_spawn_no_subcommand' -a 'completion' -d 'print the bash, zsh, fish completion script'

# Teams, agents and types come from spawn itself.
function __fish_teamkit_spawn
    set -l cur (commandline -ct)
    string match -q -- '-*' $cur; and return
    spawn (commandline -opc)[2..-1] "$cur" --generate-bash-completion 2>/dev/null
end
complete -c spawn -f -a '(__fish_teamkit_spawn)'
