set -u
bee() {
  _r=0; _o=$(beegfs --mgmtd-addr=10.0.0.1:18010 --mount=none --auth-file=/etc/beeburst/auth/conn.auth --tls-cert-file=/etc/beeburst/auth/tls.crt "$@" 2>&1) || _r=$?
  if [ $_r -ne 0 ] && printf '%s\n' "$_o" | tail -n 3 | grep -q 'unable to verify licensed status'; then
    printf '%s\n' "$_o" | grep -v 'unable to verify licensed status'
    return 0
  fi
  printf '%s\n' "$_o"
  return $_r
}
B="bee --raw"
F="--size=375390208 --block-size=1048576 --num-tasks=4 --odirect --wait=2s --verbose --unadorned"
out=/tmp/storagebench
stop() {
  $B benchmark stop >/dev/null 2>&1
  $B benchmark cleanup >/dev/null 2>&1
  echo "stopped before the end (the benchmark was stopped and its files removed)" > /dev/termination-log
  exit 143
}
trap stop TERM INT
keep() {
  sed -E -e 's/[|]/ /g' -e 's/^[[:space:]]+//' -e 's/[[:space:]]+/ /g' -e 's/ $//' \
    -e 's/^(write|read) ([0-9]+kiB\/s) (s:[0-9]+) .*/\1 \2 \3/' "$1" |
    grep -E '^(write|read) [0-9]|^UNINITIALIZED |^[0-9]+( [0-9]+){8}$|[Ee]rror|ERROR'
}
# Files of an earlier, interrupted attempt.
$B benchmark cleanup >/dev/null 2>&1
$B benchmark start $F > $out.write 2>&1 & wait $!; w=$?
r=1
if [ $w -eq 0 ]; then
  $B benchmark start --read $F > $out.read 2>&1 & wait $!; r=$?
fi
$B benchmark cleanup > $out.cleanup 2>&1 & wait $!; c=$?
{ echo "== write (exit $w) =="; keep $out.write
  echo "== read (exit $r) =="; [ $w -eq 0 ] && keep $out.read
  [ $c -eq 0 ] || { echo "== cleanup (exit $c) =="; keep $out.cleanup; }
} | head -c 4096 > /dev/termination-log
[ $w -eq 0 ] && [ $r -eq 0 ]
