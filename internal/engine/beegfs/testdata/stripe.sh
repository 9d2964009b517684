set -eu
bee() {
  _r=0; _o=$(beegfs --mgmtd-addr=10.0.0.1:18010 --mount=none --auth-file=/etc/beeburst/auth/conn.auth --tls-cert-file=/etc/beeburst/auth/tls.crt "$@" 2>&1) || _r=$?
  if [ $_r -ne 0 ] && printf '%s\n' "$_o" | tail -n 3 | grep -q 'unable to verify licensed status'; then
    printf '%s\n' "$_o" | grep -v 'unable to verify licensed status'
    return 0
  fi
  printf '%s\n' "$_o"
  return $_r
}
bee entry set --chunk-size=512ki --num-targets=2 /
echo "root stripe pattern: chunk size 512ki over 2 target(s)" | tee /dev/termination-log
