# inbox fish shell completion

function __fish_inbox_no_subcommand --description 'Test if there has been any subcommand yet'
    for i in (commandline -opc)
        if contains -- $i send drain list prune copy completion
            return 1
        end
    end
    return 0
end

complete -c inbox -n '__fish_inbox_no_subcommand' -f -l help -s h -d 'show help'
complete -c inbox -n '__fish_inbox_no_subcommand' -f -l version -d 'print the version and exit'
complete -c inbox -n '__fish_seen_subcommand_from send' -f -l help -s h -d 'show help'
complete -r -c inbox -n '__fish_inbox_no_subcommand' -a 'send' -d 'store a message and print its id'
complete -c inbox -n '__fish_seen_subcommand_from send' -f -l from -r -d 'sender `NAME` (default $TEAMKIT_AGENT, else $USER, else human)'
complete -c inbox -n '__fish_seen_subcommand_from send' -f -l subject -r -d 'one-line `SUBJECT`'
complete -c inbox -n '__fish_seen_subcommand_from send' -f -l reply-to -r -d '`ID` of the message this answers'
complete -c inbox -n '__fish_seen_subcommand_from send' -f -l all -d 'one message to every agent recorded in the team (not the sender)'
complete -c inbox -n '__fish_seen_subcommand_from send' -f -l db -r -d 'mailbox: a SQLite file `PATH` or a postgres:// URL (default $TEAMKIT_DB, else $XDG_STATE_HOME/teamkit/teamkit.db)'
complete -c inbox -n '__fish_seen_subcommand_from send' -f -l json -d 'print JSON, one object per line'
complete -c inbox -n '__fish_seen_subcommand_from drain' -f -l help -s h -d 'show help'
complete -r -c inbox -n '__fish_inbox_no_subcommand' -a 'drain' -d 'print unread messages for <name>, oldest first, and mark them read'
complete -c inbox -n '__fish_seen_subcommand_from drain' -f -l peek -d 'print without marking read'
complete -c inbox -n '__fish_seen_subcommand_from drain' -f -l limit -r -d 'at most `N` messages (0: all)'
complete -c inbox -n '__fish_seen_subcommand_from drain' -f -l wait -r -d 'block up to `DURATION` (60 = 60s, 10m, 1h) for a message; exit 2 if none came'
complete -c inbox -n '__fish_seen_subcommand_from drain' -f -l reply-to -r -d 'only replies to message `ID` (what a dispatcher waits for)'
complete -c inbox -n '__fish_seen_subcommand_from drain' -f -l format -r -d 'print each message with a Go `TEMPLATE` ({{.ID}} {{.From}} {{firstline .Body}} …)'
complete -c inbox -n '__fish_seen_subcommand_from drain' -f -l lease -r -d 'how long the messages being printed stay this drain\'s before another drain may take them again (default 30s)'
complete -c inbox -n '__fish_seen_subcommand_from drain' -f -l db -r -d 'mailbox: a SQLite file `PATH` or a postgres:// URL (default $TEAMKIT_DB, else $XDG_STATE_HOME/teamkit/teamkit.db)'
complete -c inbox -n '__fish_seen_subcommand_from drain' -f -l json -d 'print JSON, one object per line'
complete -c inbox -n '__fish_seen_subcommand_from list' -f -l help -s h -d 'show help'
complete -r -c inbox -n '__fish_inbox_no_subcommand' -a 'list' -d 'list unread messages (all with --all) without marking them'
complete -c inbox -n '__fish_seen_subcommand_from list' -f -l all -d 'include messages already read'
complete -c inbox -n '__fish_seen_subcommand_from list' -f -l db -r -d 'mailbox: a SQLite file `PATH` or a postgres:// URL (default $TEAMKIT_DB, else $XDG_STATE_HOME/teamkit/teamkit.db)'
complete -c inbox -n '__fish_seen_subcommand_from list' -f -l json -d 'print JSON, one object per line'
complete -c inbox -n '__fish_seen_subcommand_from prune' -f -l help -s h -d 'show help'
complete -r -c inbox -n '__fish_inbox_no_subcommand' -a 'prune' -d 'remove read messages older than D, and the run files of agents exited that long ago'
complete -c inbox -n '__fish_seen_subcommand_from prune' -f -l older -r -d 'what to remove: older than `D` (30d, 12h; required)'
complete -c inbox -n '__fish_seen_subcommand_from prune' -f -l dry-run -d 'say what would be removed, remove nothing'
complete -c inbox -n '__fish_seen_subcommand_from prune' -f -l db -r -d 'mailbox: a SQLite file `PATH` or a postgres:// URL (default $TEAMKIT_DB, else $XDG_STATE_HOME/teamkit/teamkit.db)'
complete -c inbox -n '__fish_seen_subcommand_from prune' -f -l json -d 'print JSON, one object per line'
complete -c inbox -n '__fish_seen_subcommand_from copy' -f -l help -s h -d 'show help'
complete -r -c inbox -n '__fish_inbox_no_subcommand' -a 'copy' -d 'copy this mailbox, every team, into another (SQLite into PostgreSQL, say)'
complete -c inbox -n '__fish_seen_subcommand_from copy' -f -l to -r -d 'the target mailbox: a `DB` path or postgres:// URL (required)'
complete -c inbox -n '__fish_seen_subcommand_from copy' -f -l db -r -d 'mailbox: a SQLite file `PATH` or a postgres:// URL (default $TEAMKIT_DB, else $XDG_STATE_HOME/teamkit/teamkit.db)'
complete -c inbox -n '__fish_seen_subcommand_from copy' -f -l json -d 'print JSON, one object per line'
complete -c inbox -n '__fish_seen_subcommand_from completion' -f -l help -s h -d 'show help'
complete -r -c inbox -n '__fish_inbox_no_subcommand' -a 'completion' -d 'print the bash, zsh, fish completion script'

# Teams, agents and types come from inbox itself.
function __fish_teamkit_inbox
    set -l cur (commandline -ct)
    string match -q -- '-*' $cur; and return
    inbox (commandline -opc)[2..-1] "$cur" --generate-bash-completion 2>/dev/null
end
complete -c inbox -f -a '(__fish_teamkit_inbox)'
