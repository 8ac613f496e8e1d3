set -u
brief=$1
ready mark || exit 3
if grep -q '^### Your question and its answer' "$brief"; then
	echo "run=$TEAMKIT_RUN resumed=yes" >> "spawns-$TEAMKIT_AGENT.log"
	cp "$brief" "resumed-$TEAMKIT_AGENT.md"
	inbox send "$TEAMKIT_TEAM" boss -- "resumed $TEAMKIT_AGENT" || exit 4
	exit 0
fi
echo "run=$TEAMKIT_RUN resumed=no" >> "spawns-$TEAMKIT_AGENT.log"
if grep -q 'MODE=approval' "$brief"; then
	set -- --approval 'May I deploy build 42 to production?'
else
	set -- 'Which colour should the button be?'
fi
ask "$@" > "ask1-$TEAMKIT_AGENT.out" 2>&1; echo "exit=$?" >> "ask1-$TEAMKIT_AGENT.out"
ask "$@" > "ask2-$TEAMKIT_AGENT.out" 2>&1; echo "exit=$?" >> "ask2-$TEAMKIT_AGENT.out"
exit 0
