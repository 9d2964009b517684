#!/usr/bin/env bash
# Proves the testbed's hardware is what it claims (test/testbed, Go, stdlib only):
#   - iperf3 between pods on worker-1 and worker-2 within 10% of the link rate,
#   - fio --direct=1 write and read on a node's /mnt/nvme within 10% of the disk caps,
#   - two pods on one node each get the whole cap (the cap is per container),
#   - the Node labels carry the documented figures.
#
#   hack/testbed/prove.sh                 # on the running testbed ($TESTBED_DIR), left up
#   hack/testbed/prove.sh --full [UP ARGS]  # also: a failed start + down.sh, up.sh UP ARGS,
#                                         # the proofs, down.sh, and the host-as-it-was check
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
if [ "${1:-}" = --full ]; then
  shift
  # shellcheck source=hack/testbed/lib.sh
  source "$repo/hack/testbed/lib.sh"
  testbed_exclusive
  export BEEBURST_TESTBED=1
  [ $# -gt 0 ] && export BEEBURST_TESTBED_ARGS="$*"
else
  export BEEBURST_TESTBED=reuse
fi
cd "$repo"
exec go test ./test/testbed/ -run TestTestbed -count=1 -v -timeout 20m
