# ready fish shell completion

function __fish_ready_no_subcommand --description 'Test if there has been any subcommand yet'
    for i in (commandline -opc)
        if contains -- $i mark check clear completion
            return 1
        end
    end
    return 0
end

complete -c ready -n '__fish_ready_no_subcommand' -f -l help -s h -d 'show help'
complete -c ready -n '__fish_ready_no_subcommand' -f -l version -d 'print the version and exit'
complete -c ready -n '__fish_seen_subcommand_from mark' -f -l help -s h -d 'show help'
complete -r -c ready -n '__fish_ready_no_subcommand' -a 'mark' -d 'mark this agent\'s run ready'
complete -c ready -n '__fish_seen_subcommand_from mark' -f -l run -r -d 'the launch `RUN` id (default $TEAMKIT_RUN)'
complete -c ready -n '__fish_seen_subcommand_from mark' -f -l db -r -d 'mailbox: a SQLite file `PATH` or a postgres:// URL (default $TEAMKIT_DB, else $XDG_STATE_HOME/teamkit/teamkit.db)'
complete -c ready -n '__fish_seen_subcommand_from mark' -f -l json -d 'print JSON, one object per line'
complete -c ready -n '__fish_seen_subcommand_from check' -f -l help -s h -d 'show help'
complete -r -c ready -n '__fish_ready_no_subcommand' -a 'check' -d 'exit 0 if the agent\'s current run has marked ready, 2 if not'
complete -c ready -n '__fish_seen_subcommand_from check' -f -l run -r -d 'the launch `RUN` id (default $TEAMKIT_RUN)'
complete -c ready -n '__fish_seen_subcommand_from check' -f -l db -r -d 'mailbox: a SQLite file `PATH` or a postgres:// URL (default $TEAMKIT_DB, else $XDG_STATE_HOME/teamkit/teamkit.db)'
complete -c ready -n '__fish_seen_subcommand_from check' -f -l json -d 'print JSON, one object per line'
complete -c ready -n '__fish_seen_subcommand_from clear' -f -l help -s h -d 'show help'
complete -r -c ready -n '__fish_ready_no_subcommand' -a 'clear' -d 'remove the mark'
complete -c ready -n '__fish_seen_subcommand_from clear' -f -l run -r -d 'the launch `RUN` id (default $TEAMKIT_RUN)'
complete -c ready -n '__fish_seen_subcommand_from clear' -f -l db -r -d 'mailbox: a SQLite file `PATH` or a postgres:// URL (default $TEAMKIT_DB, else $XDG_STATE_HOME/teamkit/teamkit.db)'
complete -c ready -n '__fish_seen_subcommand_from clear' -f -l json -d 'print JSON, one object per line'
complete -c ready -n '__fish_seen_subcommand_from completion' -f -l help -s h -d 'show help'
complete -r -c ready -n '__fish_ready_no_subcommand' -a 'completion' -d 'print the bash, zsh, fish completion script'

# Teams, agents and types come from ready itself.
function __fish_teamkit_ready
    set -l cur (commandline -ct)
    string match -q -- '-*' $cur; and return
    ready (commandline -opc)[2..-1] "$cur" --generate-bash-completion 2>/dev/null
end
complete -c ready -f -a '(__fish_teamkit_ready)'
