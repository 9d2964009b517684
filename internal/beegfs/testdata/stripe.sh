set -eu
beegfs --mgmtd-addr=10.0.0.1:18010 --mount=none --auth-file=/etc/beeburst/auth/conn.auth --tls-cert-file=/etc/beeburst/auth/tls.crt entry set --chunk-size=512ki --num-targets=2 /
echo "root stripe pattern: chunk size 512ki over 2 target(s)" | tee /dev/termination-log
