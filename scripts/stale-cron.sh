#!/bin/sh
# stale-cron.sh — the cron job that notices work nobody reads, and tells a
# person.
#
# The crontab line (crontab -e), with the path of your checkout; it works in
# cron's bare environment, which has HOME but a PATH of /usr/bin:/bin only:
#
#   */5 * * * * PATH=$HOME/go/bin:/usr/local/bin:/usr/bin:/bin $HOME/src/teamkit/scripts/stale-cron.sh myteam
#
# It runs `stale TEAM --min N` (N is STALE_MIN, default 10). When messages sit
# unread, the list goes to a person — never into the mailbox it watches
# (an alert there would itself be unread, and stale, at the next run):
#   - by default to stdout, which cron mails to the crontab's owner (set
#     MAILTO=you@example.com above the line to choose where);
#   - with STALE_NOTIFY set, to that command's stdin instead, e.g.
#     STALE_NOTIFY="mail -s teamkit-stale you@example.com" or a script that
#     posts to a chat. The value is split on spaces and run directly, never
#     through a shell.
# TEAMKIT_DB selects the mailbox as for every teamkit command (default
# $HOME/.local/state/teamkit/teamkit.db). When the teamkit commands are not
# on PATH at all, it says so on stderr (which cron mails too).
# Exit: 0 nothing stale, 2 stale messages reported, 1 failure, 64 usage.
set -u
if [ $# -ne 1 ]; then
	echo "usage: stale-cron.sh TEAM   (the alert goes to stdout, or to STALE_NOTIFY's stdin)" >&2
	exit 64
fi
team=$1
# Cron's PATH rarely holds Go's bin directory; add the usual one.
PATH=$PATH:${HOME:-/nonexistent}/go/bin
if ! command -v stale >/dev/null 2>&1; then
	echo "stale-cron.sh: the teamkit command 'stale' is not on PATH ($PATH); set PATH in the crontab line" >&2
	exit 1
fi
report=$(stale "$team" --min "${STALE_MIN:-10}")
case $? in
0) exit 0 ;;
2) ;;
*) exit 1 ;;
esac
alert=$(printf 'teamkit: messages unread for over %s minutes in team %s:\n%s\n' "${STALE_MIN:-10}" "$team" "$report")
if [ -n "${STALE_NOTIFY:-}" ]; then
	# Unquoted on purpose: the command and its arguments, split on spaces.
	set -f
	printf '%s\n' "$alert" | $STALE_NOTIFY || {
		echo "stale-cron.sh: STALE_NOTIFY ($STALE_NOTIFY) failed; the alert was:" >&2
		printf '%s\n' "$alert" >&2
		exit 1
	}
else
	printf '%s\n' "$alert"
fi
exit 2
