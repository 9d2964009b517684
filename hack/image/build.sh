#!/usr/bin/env bash
# Builds a container image tar (docker-archive, which `ctr images import` accepts) without a
# Docker daemon: a static binary and/or host binaries together with the libraries `ldd` lists
# for them, on one deterministic layer.
#
#   hack/image/build.sh --name beeburst/agent:dev -o out.tar \
#       [--binary bin/agent[:/usr/local/bin/agent]]...   # files copied as they are
#       [--host-bin fio]...                               # a command on PATH + its libraries
#       [--entrypoint '["/usr/local/bin/agent"]'] [--cmd '["--help"]'] [--env K=V]...
#   hack/image/build.sh --pause -o pause.tar [--name beeburst/pause:dev]
#
# Without --entrypoint the first --binary (else the first --host-bin) is the entrypoint.
# --pause builds the sandbox image (hack/image/pause, a static Go program).
# Host binaries keep their host path (/usr/bin/fio); the usr-merge symlinks (/bin, /lib,
# /lib64, /sbin) are copied from the host. /bin/sh is added when --host-bin sh is given.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
name="" out="" entrypoint="" cmd="" pause=false
binaries=() hostbins=() envs=()
while [ $# -gt 0 ]; do
  case "$1" in
    --name) name=$2; shift 2 ;;
    -o|--output) out=$2; shift 2 ;;
    --binary) binaries+=("$2"); shift 2 ;;
    --host-bin) hostbins+=("$2"); shift 2 ;;
    --entrypoint) entrypoint=$2; shift 2 ;;
    --cmd) cmd=$2; shift 2 ;;
    --env) envs+=(-env "$2"); shift 2 ;;
    --pause) pause=true; shift ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "build.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$out" ] || { echo "build.sh: -o OUT.tar is required" >&2; exit 2; }
export CGO_ENABLED=0 GOFLAGS=-buildvcs=false

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$work/rootfs
mkdir -p "$root"/{etc,tmp,usr/bin,usr/lib,usr/local/bin}
chmod 1777 "$root/tmp"
# usr-merge layout as on the host, so ldd's /lib64/ld-linux... paths resolve in the image.
for d in bin sbin lib lib64; do
  if [ -L "/$d" ]; then ln -s "$(readlink "/$d")" "$root/$d"; mkdir -p "$root/$(readlink -f "/$d")"; fi
done
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n' > "$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' > "$root/etc/group"
printf 'hosts: files dns\n' > "$root/etc/nsswitch.conf"

# add_file HOSTPATH: the file at its real path, plus the symlink chain of its final component.
add_file() {
  local p=$1 real dir
  real=$(readlink -f "$p")
  mkdir -p "$root$(dirname "$real")"
  [ -e "$root$real" ] || cp -p "$real" "$root$real"
  dir=$(readlink -f "$(dirname "$p")")
  local base
  base=$(basename "$p")
  if [ "$dir/$base" != "$real" ] && [ ! -e "$root$dir/$base" ]; then
    mkdir -p "$root$dir"
    ln -s "$(readlink "$p")" "$root$dir/$base"
    add_file "$(cd "$(dirname "$p")" && readlink -f "$(readlink "$p")")" 2>/dev/null || true
  fi
}

add_libs() {
  local bin=$1 lib
  # ldd prints "name => /path (addr)" and "/lib64/ld-linux... (addr)"; static binaries print
  # "not a dynamic executable" (exit 1).
  for lib in $(ldd "$bin" 2>/dev/null | awk '/=> \//{print $3} /^\t\//{print $1}'); do
    add_file "$lib"
  done
}

first=""
if $pause; then
  name=${name:-beeburst/pause:dev}
  (cd "$repo" && go build -trimpath -ldflags '-s -w' -o "$root/pause" ./hack/image/pause)
  first=/pause
fi
for b in "${binaries[@]}"; do
  src=${b%%:*}
  dst=/usr/local/bin/$(basename "$src")
  [ "$src" != "$b" ] && dst=${b#*:}
  [ -f "$src" ] || { echo "build.sh: no such binary $src" >&2; exit 1; }
  mkdir -p "$root$(dirname "$dst")"
  cp -p "$src" "$root$dst"
  add_libs "$src"
  first=${first:-$dst}
done
for h in "${hostbins[@]}"; do
  p=$(command -v "$h" || true)
  [ -n "$p" ] && [ -f "$p" ] || { echo "build.sh: host binary $h not found (install it, e.g. hack/testbed/deps.sh)" >&2; exit 1; }
  add_file "$p"
  add_libs "$(readlink -f "$p")"
  if [ "$h" = sh ]; then mkdir -p "$root/usr/bin"; [ -e "$root/usr/bin/sh" ] || ln -s "$(basename "$(readlink -f "$p")")" "$root/usr/bin/sh"; fi
  first=${first:-$p}
done
# fio loads some I/O engines as plugins: keep them next to the binary's libraries.
for h in "${hostbins[@]}"; do
  if [ "$h" = fio ] && [ -d /usr/lib/x86_64-linux-gnu/fio ]; then
    for so in /usr/lib/x86_64-linux-gnu/fio/*.so; do [ -e "$so" ] && add_file "$so" && add_libs "$so"; done
  fi
done
[ -n "$name" ] || { echo "build.sh: --name is required" >&2; exit 2; }
if [ -z "$entrypoint" ] && [ -n "$first" ]; then entrypoint='["'$first'"]'; fi

mkdir -p "$(dirname "$out")"
out=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")
args=(-rootfs "$root" -tag "$name" -o "$out" "${envs[@]}")
[ -n "$entrypoint" ] && args+=(-entrypoint "$entrypoint")
[ -n "$cmd" ] && args+=(-cmd "$cmd")
(cd "$repo" && go run ./hack/image/mkarchive "${args[@]}")
echo "build.sh: $name -> $out ($(du -h "$out" | cut -f1))"
