#!/usr/bin/env bash
# Renders the chart and checks it agrees with config/ (hack/chartcheck): once with default
# values (the ServiceMonitor and the Grafana dashboard must be absent), once with both
# enabled (the ServiceMonitor must match config/prometheus, the dashboard must parse).
set -euo pipefail
helm=${1:-helm}
cd "$(dirname "$0")/.."
"$helm" template beeburst charts/beeburst --namespace beeburst-system --include-crds | go run ./hack/chartcheck config
"$helm" template beeburst charts/beeburst --namespace beeburst-system --include-crds \
  --set metrics.serviceMonitor.enabled=true --set metrics.grafanaDashboard.enabled=true \
  --api-versions monitoring.coreos.com/v1/ServiceMonitor | go run ./hack/chartcheck -monitoring config
# The chart's own tests with this helm: every schema refusal says what is allowed, the values
# for the operator's pod reach it, the name overrides rename everything consistently.
HELM=$(command -v "$helm") go test ./hack/chartcheck/ -count=1 -run 'TestSchemaRefusals|TestChart'
