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
want_meta=2; want_storage=2
deadline=$(( $(date +%s) + 240 ))
while :; do
  meta=$(bee target list --node-type=meta --state); rc1=$?
  storage=$(bee target list --node-type=storage --state); rc2=$?
  m=$(printf '%s\n' "$meta" | grep -ci 'online.*good')
  s=$(printf '%s\n' "$storage" | grep -ci 'online.*good')
  if [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && [ "$m" -ge $want_meta ] && [ "$s" -ge $want_storage ]; then
    echo "ready: $m of $want_meta metadata and $s of $want_storage storage targets online and good" | tee /dev/termination-log
    exit 0
  fi
  if [ $(date +%s) -ge $deadline ]; then
    { echo "not ready: $m of $want_meta metadata and $s of $want_storage storage targets online and good; not yet:"
      printf '%s\n%s\n' "$meta" "$storage" | grep -vi 'online.*good' | tail -n 30; } | tee /dev/termination-log
    exit 1
  fi
  sleep 3
done
