# stale fish shell completion

function __fish_stale_no_subcommand --description 'Test if there has been any subcommand yet'
    for i in (commandline -opc)
        if contains -- $i completion
            return 1
        end
    end
    return 0
end

complete -c stale -n '__fish_stale_no_subcommand' -f -l to -r -d 'only messages to `AGENT` (with --idle: only that agent)'
complete -c stale -n '__fish_stale_no_subcommand' -f -l min -r -d 'unread for at least `N` minutes'
complete -c stale -n '__fish_stale_no_subcommand' -f -l idle -r -d 'list running agents silent for at least `N` minutes, not messages'
complete -c stale -n '__fish_stale_no_subcommand' -f -l db -r -d 'mailbox: a SQLite file `PATH` or a postgres:// URL (default $TEAMKIT_DB, else $XDG_STATE_HOME/teamkit/teamkit.db)'
complete -c stale -n '__fish_stale_no_subcommand' -f -l json -d 'print JSON, one object per line'
complete -c stale -n '__fish_stale_no_subcommand' -f -l help -s h -d 'show help'
complete -c stale -n '__fish_stale_no_subcommand' -f -l version -d 'print the version and exit'
complete -c stale -n '__fish_seen_subcommand_from completion' -f -l help -s h -d 'show help'
complete -r -c stale -n '__fish_stale_no_subcommand' -a 'completion' -d 'print the bash, zsh, fish completion script'

# Teams, agents and types come from stale itself.
function __fish_teamkit_stale
    set -l cur (commandline -ct)
    string match -q -- '-*' $cur; and return
    stale (commandline -opc)[2..-1] "$cur" --generate-bash-completion 2>/dev/null
end
complete -c stale -f -a '(__fish_teamkit_stale)'
