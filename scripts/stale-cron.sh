#!/bin/sh
# stale-cron.sh — the cron job that notices work nobody reads.
#
#   */5 * * * * TEAMKIT_DB=$HOME/.local/state/teamkit/teamkit.db /path/to/stale-cron.sh myteam lead
#
# Runs `stale TEAM --min N`; when messages sit unread (exit 2) it sends the
# list to NOTIFY's inbox (the team lead, say) once per run, so the alert is
# itself a durable message. Exit: 0 nothing stale, 2 alert sent, 1 failure.
set -u
if [ $# -ne 2 ]; then
	echo "usage: stale-cron.sh TEAM NOTIFY" >&2
	exit 64
fi
team=$1 notify=$2
report=$(stale "$team" --min "${STALE_MIN:-10}")
case $? in
0) exit 0 ;;
2)
	printf 'Unread for over %s minutes in team %s:\n%s\n' "${STALE_MIN:-10}" "$team" "$report" |
		inbox send "$team" "$notify" --from stale-cron --subject "stale messages" >/dev/null || exit 1
	exit 2
	;;
*) exit 1 ;;
esac
