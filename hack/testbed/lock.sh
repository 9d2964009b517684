# shellcheck shell=bash
# Sourced by hack/testbed/lib.sh and hack/cluster.sh.
# One testbed per host, so one user of it at a time. testbed_exclusive takes
# /tmp/beeburst-testbed.lock (fd 9) for the calling script and everything it runs, waiting for
# another run (a `make test` in a second clone, a `make bench`) to finish instead of tearing
# its testbed down under it. up.sh closes fd 9 so the testbed's daemons never hold the lock
# after the run that started them.
#
# Re-entrant for the scripts a holder runs: BEEBURST_TESTBED_LOCKED names the holder's pid,
# and only a descendant of that process skips the lock. A variable left in some other shell
# (an exported value, a copied command line) is ignored, so that it cannot let a run tear
# down a testbed another run holds. To run commands of your own under the lock,
# use hack/testbed/with-lock.sh.
TB_LOCK=${TB_LOCK:-/tmp/beeburst-testbed.lock}

# tb_descends_from PID: the current shell is PID or runs below it.
tb_descends_from() {
  local want=$1 pid=$$ stat
  while [ -n "$pid" ] && [ "$pid" -gt 1 ] 2>/dev/null; do
    [ "$pid" = "$want" ] && return 0
    stat=$(cat "/proc/$pid/stat" 2>/dev/null) || return 1
    stat=${stat##*) }          # after "pid (comm) ": state ppid ...
    pid=$(echo "$stat" | cut -d' ' -f2)
  done
  return 1
}

testbed_exclusive() {
  if [ -n "${BEEBURST_TESTBED_LOCKED:-}" ] && tb_descends_from "$BEEBURST_TESTBED_LOCKED"; then
    return 0
  fi
  exec 9>>"$TB_LOCK"
  if ! flock -n 9; then
    echo "testbed: another run is using the testbed (lock $TB_LOCK, held by pid(s) $(fuser "$TB_LOCK" 2>/dev/null | xargs)); waiting for it" >&2
    flock 9
    echo "testbed: the testbed is free" >&2
  fi
  export BEEBURST_TESTBED_LOCKED=$$
}
