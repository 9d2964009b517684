/*
Command agent is beeburst's benchmark agent. It runs inside the probe and benchmark pods the
operator creates on a burst buffer's nodes (stages 2-4 of METHOD.md) and, as `agent run`, on
one machine to check it before trusting it.

# Contract with the controller

The operator launches the agent with internal/agentapi's requests, whose subcommand and flag
names are the constants this command defines its flags with (contract_test.go parses every
request back). Every benchmark subcommand prints one bench.Report (JSON) on stdout, which the
operator reads with bench.DecodeReport. In a pod:

  - --termination-log /dev/termination-log writes the Report compacted below 4096 bytes
    (bench.Report.Compact: per-interval series, per-client figures, sweep points, monitored
    entries beyond the busiest, the analysis go first; the aggregates stay). The controller
    reads it from the container's terminated state; set terminationMessagePolicy: File.
  - --output FILE writes the full Report (per-client, per-interval detail) to a file: put it
    on a volume the next step reads (the burst buffer's directory, an emptyDir shared with a
    sidecar). The agent has no Kubernetes client and writes no ConfigMap.
  - $NODE_NAME (downward API, spec.nodeName) names the node in the Report.
  - Exit code 0 succeeded, 1 failed, 2 usage, 3 cancelled; the Report's phase says the same.
    Run it with restartPolicy: Never and backoffLimit: 0: a benchmark must not be retried
    blindly.
  - --timeout bounds every run; SIGTERM (pod deletion) stops the tool's process group,
    removes the run's files and reports phase "cancelled" within the grace period (the tool
    gets 10 s after SIGTERM before SIGKILL).

Files go to a new subdirectory .beeburst-<run>-* of --dir, removed whatever happens. In fio
client mode (ideal --clients) the files live on the servers; the read-back unlinks them.
*/
package main
