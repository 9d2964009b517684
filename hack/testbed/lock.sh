# shellcheck shell=bash
# Sourced by hack/testbed/lib.sh and hack/cluster.sh.
# One testbed per host, so one user of it at a time. testbed_exclusive takes
# /tmp/beeburst-testbed.lock (fd 9) for the calling script and everything it runs, waiting for
# another run (a `make test` in a second clone, a `make bench`) to finish instead of tearing
# its testbed down under it. Re-entrant through BEEBURST_TESTBED_LOCKED; up.sh closes fd 9 so
# the testbed's daemons never hold the lock after the run that started them.
TB_LOCK=${TB_LOCK:-/tmp/beeburst-testbed.lock}
testbed_exclusive() {
  [ -n "${BEEBURST_TESTBED_LOCKED:-}" ] && return 0
  exec 9>>"$TB_LOCK"
  if ! flock -n 9; then
    echo "testbed: another run is using the testbed (lock $TB_LOCK, held by pid(s) $(fuser "$TB_LOCK" 2>/dev/null | xargs)); waiting for it" >&2
    flock 9
    echo "testbed: the testbed is free" >&2
  fi
  export BEEBURST_TESTBED_LOCKED=$$
}
