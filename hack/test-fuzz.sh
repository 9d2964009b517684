#!/usr/bin/env bash
# Runs every fuzz target of the module (func FuzzXxx in internal/ and cmd/, found by name so a
# new one cannot be forgotten) for FUZZTIME each. `go test -fuzz` takes one package and one
# target per run. The seed corpora also run in `make test-unit`, as ordinary tests.
#
# - A new interesting input is minimised for FUZZMINIMIZETIME, not go's default 60 s, which
#   would spend a short run's whole budget minimising instead of fuzzing.
# - A failing input is written under the package's testdata/fuzz/<target>/: commit it with the
#   fix, and it runs in every `go test` from then on.
# - Fuzzing compiles every package linked into the test with coverage instrumentation; for a
#   package that links Kubernetes that takes minutes on a fresh machine, so such targets are
#   skipped (and say so) unless FUZZ_KUBERNETES=1. Parsers of outside input stay free of
#   Kubernetes for this reason (internal/bench, the StorageBench parser among them).
# - Go before 1.27 can end a time-bounded fuzz run with a bare "context deadline exceeded" and
#   no failing input when a busy worker misses the deadline (golang/go#75804). Such a run is
#   reported as a warning; a run that wrote a failing input, or failed otherwise, fails.
set -uo pipefail

FUZZTIME=${FUZZTIME:-4s}
FUZZMINIMIZETIME=${FUZZMINIMIZETIME:-1s}
FUZZ_KUBERNETES=${FUZZ_KUBERNETES:-}

cd "$(dirname "$0")/.."
start=$(date +%s)
ran=0 skipped=0 flaked=0
for f in $(grep -rl --include='*_test.go' '^func Fuzz' internal cmd | sort); do
  pkg=./$(dirname "$f")
  for t in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$f"); do
    # Not `go list | grep -q`: grep's early exit fails go list (SIGPIPE) under pipefail.
    if ! deps=$(go list -deps -test "$pkg"); then
      echo "test-fuzz: FAILED: go list $pkg"
      exit 1
    fi
    if [[ -z $FUZZ_KUBERNETES ]] && grep -q '^k8s.io/' <<<"$deps"; then
      echo "test-fuzz: skipped $pkg $t: it links Kubernetes (FUZZ_KUBERNETES=1 runs it; its seeds run in test-unit)"
      skipped=$((skipped + 1))
      continue
    fi
    echo "test-fuzz: $pkg $t ($FUZZTIME)"
    ran=$((ran + 1))
    if out=$(go test "$pkg" -run "^$t\$" -fuzz "^$t\$" -fuzztime "$FUZZTIME" -fuzzminimizetime "$FUZZMINIMIZETIME" 2>&1); then
      echo "$out" | tail -n 2
    elif grep -q 'context deadline exceeded' <<<"$out" && ! grep -q 'Failing input written' <<<"$out" &&
      [[ $(grep -c -- '--- FAIL' <<<"$out") -eq 1 ]]; then
      echo "$out" | tail -n 6
      echo "test-fuzz: WARNING: $t ended with go's deadline race (golang/go#75804), no failing input: not a failure"
      flaked=$((flaked + 1))
    else
      echo "$out"
      echo "test-fuzz: FAILED: $pkg $t"
      exit 1
    fi
  done
done
echo "test-fuzz: $ran targets fuzzed for $FUZZTIME each ($flaked hit go's deadline race), $skipped skipped, in $(($(date +%s) - start)) s"
