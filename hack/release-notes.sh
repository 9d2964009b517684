#!/usr/bin/env bash
# Prints CHANGELOG.md's section of a version (Keep a Changelog: "## [0.2.0] - 2027-01-15"),
# the body of its GitHub release; fails when there is none, so that a release is never cut
# without its changes written down.
#
#   hack/release-notes.sh v0.2.0
set -euo pipefail
cd "$(dirname "$0")/.."
v=${1:?usage: hack/release-notes.sh vX.Y.Z}
notes=$(awk -v want="${v#v}" '
  /^## \[/ { f = index($0, "## [" want "]") == 1; next }
  f' CHANGELOG.md)
if [ -z "$(tr -d '[:space:]' <<<"$notes")" ]; then
  echo "release-notes: CHANGELOG.md has no section \"## [${v#v}]\": move the Unreleased entries there first" >&2
  exit 1
fi
printf '%s\n' "$notes"
