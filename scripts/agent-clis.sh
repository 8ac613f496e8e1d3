#!/bin/sh
# agent-clis.sh DIR PKG@VERSION… — install the agent CLIs the end-to-end tests
# drive (TestAgents in agents_test.go) into DIR with npm, at exactly these
# versions, unless they are there already. DIR is a cache outside the
# repository; the tests find the executables in DIR/node_modules/.bin.
set -eu
dir=$1
shift
missing=
for spec in "$@"; do
	pkg=${spec%@*}
	want=${spec##*@}
	have=$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$dir/node_modules/$pkg/package.json" 2>/dev/null || true)
	[ "$have" = "$want" ] || missing="$missing $spec"
done
if [ -z "$missing" ]; then
	echo "agent-clis: $* already in $dir"
	exit 0
fi
command -v npm >/dev/null 2>&1 || {
	echo "agent-clis: error: npm is not installed (the agent CLIs come from npm)" >&2
	exit 1
}
mkdir -p "$dir"
echo "agent-clis: installing$missing into $dir"
# Install scripts are not needed (each package carries its native binary)
# and some fail without a network; npm warns and goes on.
npm install --no-audit --no-fund --loglevel=error --prefix "$dir" "$@"
