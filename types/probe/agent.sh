#!/bin/sh
# probe agent: a teamkit agent with no AI, for checking an installation end to
# end in seconds. It is started as `sh agent.sh BRIEFING_FILE [READY INBOX]` by
# spawn, which passes the teamkit commands' full paths and exports TEAMKIT_DB,
# TEAMKIT_TEAM, TEAMKIT_AGENT and TEAMKIT_RUN, so the commands below know who
# it is without names.
#
# It checks its briefing, marks itself ready, answers every message in its
# inbox with "done: <first line>", checks the inbox once more, and exits 0.
# Any teamkit command that fails makes it exit non-zero. Nothing it reads is
# ever evaluated.
set -eu

brief=${1-}
ready=${2:-ready}
inbox=${3:-inbox}
if [ -z "$brief" ] || [ ! -f "$brief" ] || [ ! -r "$brief" ] || [ ! -s "$brief" ]; then
	echo "probe: briefing file '$brief' is missing, unreadable or empty" >&2
	exit 3
fi
bytes=$(wc -c <"$brief")
bytes=${bytes##*[!0-9]} # some wc implementations pad the count with blanks
echo "probe: briefed ($bytes bytes)" >&2

"$ready" mark

# answer drains the inbox and replies to each message. The drain runs in a
# command substitution and the loop reads a here-document, not a pipe, so the
# loop runs in this shell and set -e sees a failing inbox command.
answer() {
	msgs=$("$inbox" drain --format '{{.ID}} {{.From}} {{firstline .Body}}')
	while read -r id from first; do
		[ -n "$id" ] || continue
		"$inbox" send "$TEAMKIT_TEAM" "$from" --reply-to "$id" -- "done: $first"
	done <<EOF_MSGS
$msgs
EOF_MSGS
}

answer
answer
exit 0
