# resume fish shell completion

function __fish_resume_no_subcommand --description 'Test if there has been any subcommand yet'
    for i in (commandline -opc)
        if contains -- $i pause unpause completion
            return 1
        end
    end
    return 0
end

complete -c resume -n '__fish_resume_no_subcommand' -f -l watch -d 'run a pass every --interval until interrupted'
complete -c resume -n '__fish_resume_no_subcommand' -f -l interval -r -d 'time `D` between --watch passes (60 = 60s, 1m)'
complete -c resume -n '__fish_resume_no_subcommand' -f -l parallel -r -d 're-spawn up to `N` agents at once (each waits for its own handshake)'
complete -c resume -n '__fish_resume_no_subcommand' -f -l deciders -r -d '`LOGINS` (comma-separated) or @FILE who may approve (default $TEAMKIT_DECIDERS)'
complete -c resume -n '__fish_resume_no_subcommand' -f -l slack-deciders -r -d 'Slack user `IDS` (comma-separated) or @FILE who may approve in Slack (default $TEAMKIT_SLACK_DECIDERS)'
complete -c resume -n '__fish_resume_no_subcommand' -f -l db -r -d 'mailbox: a SQLite file `PATH` or a postgres:// URL (default $TEAMKIT_DB, else $XDG_STATE_HOME/teamkit/teamkit.db)'
complete -c resume -n '__fish_resume_no_subcommand' -f -l json -d 'print JSON, one object per line'
complete -c resume -n '__fish_resume_no_subcommand' -f -l help -s h -d 'show help'
complete -c resume -n '__fish_resume_no_subcommand' -f -l version -d 'print the version and exit'
complete -c resume -n '__fish_seen_subcommand_from pause' -f -l help -s h -d 'show help'
complete -r -c resume -n '__fish_resume_no_subcommand' -a 'pause' -d 'stop resuming the team\'s agents until unpause'
complete -c resume -n '__fish_seen_subcommand_from pause' -f -l db -r -d 'mailbox: a SQLite file `PATH` or a postgres:// URL (default $TEAMKIT_DB, else $XDG_STATE_HOME/teamkit/teamkit.db)'
complete -c resume -n '__fish_seen_subcommand_from pause' -f -l json -d 'print JSON, one object per line'
complete -c resume -n '__fish_seen_subcommand_from unpause' -f -l help -s h -d 'show help'
complete -r -c resume -n '__fish_resume_no_subcommand' -a 'unpause' -d 'resume the team\'s agents again'
complete -c resume -n '__fish_seen_subcommand_from unpause' -f -l db -r -d 'mailbox: a SQLite file `PATH` or a postgres:// URL (default $TEAMKIT_DB, else $XDG_STATE_HOME/teamkit/teamkit.db)'
complete -c resume -n '__fish_seen_subcommand_from unpause' -f -l json -d 'print JSON, one object per line'
complete -c resume -n '__fish_seen_subcommand_from completion' -f -l help -s h -d 'show help'
complete -r -c resume -n '__fish_resume_no_subcommand' -a 'completion' -d 'print the bash, zsh, fish completion script'

# Teams, agents and types come from resume itself.
function __fish_teamkit_resume
    set -l cur (commandline -ct)
    string match -q -- '-*' $cur; and return
    resume (commandline -opc)[2..-1] "$cur" --generate-bash-completion 2>/dev/null
end
complete -c resume -f -a '(__fish_teamkit_resume)'
