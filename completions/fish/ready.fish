# fish completion for ready (teamkit), generated from its command definitions by `make docs`.
# Install: copy to ~/.config/fish/completions/ready.fish
function __fish_teamkit_ready
    set -l cur (commandline -ct)
    set -l words (ready (commandline -opc)[2..-1] "$cur" --generate-bash-completion 2>/dev/null)
    if set -q words[1]
        printf '%s\n' $words
    else
        __fish_complete_path "$cur"
    end
end
complete -c ready -f -a '(__fish_teamkit_ready)'
