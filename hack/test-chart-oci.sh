#!/usr/bin/env bash
# The chart as an OCI artifact, as the release publishes it, through a registry on this
# machine: CNCF Distribution's registry (from the Go module proxy, `make registry`) on
# 127.0.0.1, `helm push` of the packaged chart, then `helm show chart` and `helm template`
# from oci://. `make test-chart-oci` runs it; not part of `make test`.
#
#   hack/test-chart-oci.sh                   # push, pull back, render; stop the registry
#   KEEP=1 hack/test-chart-oci.sh            # leave the registry running for a `helm install`
#                                            # from it (the line is printed), and say how to stop it
#
# HELM and OCI_REGISTRY name the binaries; VERSION (default v0.0.0-oci) the chart's version;
# REGISTRY_ADDR the address (default 127.0.0.1:5001).
set -euo pipefail
cd "$(dirname "$0")/.."
helm=${HELM:-helm}
registry=${OCI_REGISTRY:?OCI_REGISTRY names the registry binary (make registry)}
version=${VERSION:-v0.0.0-oci}
chart=${version#v}
addr=${REGISTRY_ADDR:-127.0.0.1:5001}
work=$(mktemp -d)
log() { echo "test-chart-oci: $*" >&2; }

if ss -ltn "sport = :${addr##*:}" | grep -q LISTEN; then
  log "something listens on $addr already: set REGISTRY_ADDR"; exit 1
fi
cat > "$work/config.yml" <<EOF
version: 0.1
log: {level: warn}
storage:
  filesystem: {rootdirectory: $work/data}
  delete: {enabled: true}
http:
  addr: $addr
EOF
# fd 9 is the testbed's lock when a caller holds it: the registry must not keep it.
"$registry" serve "$work/config.yml" >"$work/registry.log" 2>&1 9>&- &
pid=$!
stop() { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true; rm -rf "$work"; }
if [ -z "${KEEP:-}" ]; then trap stop EXIT; fi
for _ in $(seq 50); do curl -fsS "http://$addr/v2/" >/dev/null 2>&1 && break; sleep 0.2; done
curl -fsS "http://$addr/v2/" >/dev/null || { cat "$work/registry.log" >&2; log "the registry did not start"; exit 1; }
log "registry $("$registry" --version 2>/dev/null | awk '{print $NF}') on $addr (pid $pid)"

make -s helm-package VERSION="$version" RELEASE_DIR="$work" HELM="$helm" >/dev/null
start=$(date +%s%N)
"$helm" push "$work/beeburst-$chart.tgz" "oci://$addr/charts" --plain-http
log "pushed in $(( ($(date +%s%N) - start) / 1000000 )) ms"
"$helm" show chart "oci://$addr/charts/beeburst" --version "$chart" --plain-http | grep -E '^(name|version|appVersion):'
out=$("$helm" template beeburst "oci://$addr/charts/beeburst" --version "$chart" --plain-http --namespace beeburst-system)
grep -q "image: \"ghcr.io/beeburst/manager:$version\"" <<<"$out" || { log "the chart from the registry does not run ghcr.io/beeburst/manager:$version"; exit 1; }
log "oci://$addr/charts/beeburst:$chart pushed, pulled back and rendered (images ghcr.io/beeburst/*:$version)"
if [ -n "${KEEP:-}" ]; then
  log "the registry stays up; install from it with, e.g.:"
  echo "  $helm install beeburst oci://$addr/charts/beeburst --version $chart --plain-http -n beeburst-system --create-namespace"
  echo "  # stop it: kill $pid; rm -rf $work"
fi
