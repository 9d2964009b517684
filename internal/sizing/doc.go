// Package sizing turns what a job needs (a target: write and read bandwidth, capacity, a
// metadata rate) into a burst buffer's size, and tells afterwards whether the burst buffer
// met it. It is the pure side of spec.target (docs/sizing.md):
//
//   - Plan chooses the smallest node count (and metadata servers) whose stage-1 limit - the
//     formulas of internal/limits, the same the operator publishes - meets the target with a
//     margin, from the best figure known for each candidate node (measured and fresh >
//     documented > discovered), nodes of the workload first; or checks a given count. It says
//     why, and when no count can meet the target it says why not: the network caps it, too
//     few candidate nodes, their capacity, figures nobody knows.
//   - Assess is the verdict after stage 3: the measured sweep against the target, the
//     bottleneck, and what would meet it - so many more nodes (the model's scaling times the
//     measured efficiency, when the sweep supports it), or that the network caps it.
//   - PlanChunkSizes and ChooseChunkSize tune the beegfs engine's chunk size for a workload
//     pattern within a time budget.
//   - Compare puts the burst buffer beside other storage (validation.compareWith).
//
// Like internal/limits it imports nothing of Kubernetes: the operator and the kubectl plugin
// feed it through internal/apibridge and must agree to the byte. Units: bandwidths in bytes
// per second, capacities in bytes, decimal, float64 inside.
package sizing
