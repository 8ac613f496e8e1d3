# fish completion for resume (teamkit), generated from its command definitions by `make docs`.
# Install: copy to ~/.config/fish/completions/resume.fish
function __fish_teamkit_resume
    set -l cur (commandline -ct)
    set -l words (resume (commandline -opc)[2..-1] "$cur" --generate-bash-completion 2>/dev/null)
    if set -q words[1]
        printf '%s\n' $words
    else
        __fish_complete_path "$cur"
    end
end
complete -c resume -f -a '(__fish_teamkit_resume)'
