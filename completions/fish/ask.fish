# ask fish shell completion

function __fish_ask_no_subcommand --description 'Test if there has been any subcommand yet'
    for i in (commandline -opc)
        if contains -- $i list answer completion
            return 1
        end
    end
    return 0
end

complete -c ask -n '__fish_ask_no_subcommand' -f -l team -r -d 'team `T` (default $TEAMKIT_TEAM)'
complete -c ask -n '__fish_ask_no_subcommand' -f -l name -r -d 'the asking agent\'s `NAME` (default $TEAMKIT_AGENT)'
complete -c ask -n '__fish_ask_no_subcommand' -f -l issue -r -d 'post on GitHub issue `OWNER/REPO#N` (default $TEAMKIT_ISSUE; none: the local channel)'
complete -c ask -n '__fish_ask_no_subcommand' -f -l approval -d 'ask for approval: only /approve or /reject from a decider counts'
complete -c ask -n '__fish_ask_no_subcommand' -f -l db -r -d 'mailbox: a SQLite file `PATH` or a postgres:// URL (default $TEAMKIT_DB, else $XDG_STATE_HOME/teamkit/teamkit.db)'
complete -c ask -n '__fish_ask_no_subcommand' -f -l json -d 'print JSON, one object per line'
complete -c ask -n '__fish_ask_no_subcommand' -f -l help -s h -d 'show help'
complete -c ask -n '__fish_ask_no_subcommand' -f -l version -d 'print the version and exit'
complete -c ask -n '__fish_seen_subcommand_from list' -f -l help -s h -d 'show help'
complete -r -c ask -n '__fish_ask_no_subcommand' -a 'list' -d 'list a team\'s asks'
complete -c ask -n '__fish_seen_subcommand_from list' -f -l state -r -d '`STATE`: awaiting, answered or all'
complete -c ask -n '__fish_seen_subcommand_from list' -f -l db -r -d 'mailbox: a SQLite file `PATH` or a postgres:// URL (default $TEAMKIT_DB, else $XDG_STATE_HOME/teamkit/teamkit.db)'
complete -c ask -n '__fish_seen_subcommand_from list' -f -l json -d 'print JSON, one object per line'
complete -c ask -n '__fish_seen_subcommand_from answer' -f -l help -s h -d 'show help'
complete -r -c ask -n '__fish_ask_no_subcommand' -a 'answer' -d 'answer an ask on the local channel (the next resume pass carries it back)'
complete -c ask -n '__fish_seen_subcommand_from answer' -f -l approve -d 'approve an approval ask (TEXT is the optional reason)'
complete -c ask -n '__fish_seen_subcommand_from answer' -f -l reject -d 'reject an approval ask (TEXT is the optional reason)'
complete -c ask -n '__fish_seen_subcommand_from answer' -f -l deciders -r -d '`LOGINS` allowed to decide approvals (default $TEAMKIT_DECIDERS; a,b or @FILE); your $USER must be one'
complete -c ask -n '__fish_seen_subcommand_from answer' -f -l db -r -d 'mailbox: a SQLite file `PATH` or a postgres:// URL (default $TEAMKIT_DB, else $XDG_STATE_HOME/teamkit/teamkit.db)'
complete -c ask -n '__fish_seen_subcommand_from answer' -f -l json -d 'print JSON, one object per line'
complete -c ask -n '__fish_seen_subcommand_from completion' -f -l help -s h -d 'show help'
complete -r -c ask -n '__fish_ask_no_subcommand' -a 'completion' -d 'print the bash, zsh, fish completion script'

# Teams, agents and types come from ask itself.
function __fish_teamkit_ask
    set -l cur (commandline -ct)
    string match -q -- '-*' $cur; and return
    ask (commandline -opc)[2..-1] "$cur" --generate-bash-completion 2>/dev/null
end
complete -c ask -f -a '(__fish_teamkit_ask)'
