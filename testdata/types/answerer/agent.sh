set -u
brief=$1
# The newest answer is folded in last; earlier ones stay in the task.
token=$(grep -o 'ANSWER-[0-9a-z-]*' "$brief" | tail -n 1)
if [ -n "$token" ]; then
	echo "$token $TEAMKIT_RUN" >> "$TEAMKIT_TEST_DELIVERIES"
fi
ready mark || exit 3
ask "Next question from run $TEAMKIT_RUN?" > /dev/null 2>&1 || exit 5
exit 0
