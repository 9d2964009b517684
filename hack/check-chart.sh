#!/usr/bin/env bash
# Renders the chart with default values and checks it agrees with config/ (hack/chartcheck).
set -euo pipefail
helm=${1:-helm}
cd "$(dirname "$0")/.."
"$helm" template beeburst charts/beeburst --namespace beeburst-system --include-crds | go run ./hack/chartcheck config
