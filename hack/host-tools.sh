#!/usr/bin/env bash
# Installs the host tools the agent's real-tool tests need (fio, iperf3) from Debian packages,
# if they are missing. Idempotent: when both are present it only prints their versions.
# Needs root (or passwordless sudo) and a reachable Debian mirror; fails loudly otherwise.
set -euo pipefail

tools=(fio iperf3)
missing=()
for t in "${tools[@]}"; do
  command -v "$t" >/dev/null 2>&1 || missing+=("$t")
done

if ((${#missing[@]} > 0)); then
  echo "host-tools: installing ${missing[*]} from Debian packages" >&2
  if [[ $(id -u) -eq 0 ]]; then
    sudo=()
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo=(sudo -n)
  else
    echo "host-tools: ERROR: ${missing[*]} missing and not root (no passwordless sudo); install them by hand: apt-get install fio iperf3" >&2
    exit 1
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "host-tools: ERROR: ${missing[*]} missing and apt-get not found; install them with your package manager" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  # iperf3's package asks whether to start a daemon; answer no.
  echo "iperf3 iperf3/start_daemon boolean false" | "${sudo[@]}" debconf-set-selections 2>/dev/null || true
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  for t in "${missing[@]}"; do
    command -v "$t" >/dev/null 2>&1 || { echo "host-tools: ERROR: $t still missing after apt-get install" >&2; exit 1; }
  done
fi

echo "host-tools: $(fio --version), $(iperf3 --version | head -n1)"
