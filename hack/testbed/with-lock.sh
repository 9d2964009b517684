#!/usr/bin/env bash
# with-lock.sh CMD [ARG...]: run CMD holding the testbed's lock (lock.sh), e.g. a few manual
# steps on a testbed brought up by hand without another run tearing it down meanwhile:
#   hack/testbed/with-lock.sh bash -c 'hack/cluster.sh up && ... && hack/cluster.sh down'
set -euo pipefail
# shellcheck source=hack/testbed/lock.sh
source "$(cd "$(dirname "$0")" && pwd)/lock.sh"
testbed_exclusive
"$@"
