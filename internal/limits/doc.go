// Package limits is the staged limit model of METHOD.md: the hardware limits of formulas
// (1)-(6) for writes and reads, the analysis of a stage-3 sweep (best point, efficiency,
// plateau, parallelism limit), the verdicts (over-limit, below expectation, stragglers) and a
// renderer that shows each stage beside the previous one.
//
// It is pure Go on purpose (standard library only, no Kubernetes): the controller fills
// status.limits with it, the kubectl plugin previews limits offline with it, and both must
// agree to the byte. Conversions from the API types live in internal/apibridge.
//
// Units: every bandwidth in this package is in bytes per second, decimal (1 GB = 1e9 B).
// Link signalling rates are in bits per second and become data rates through their encoding
// (Link.DataBytesPerSecond). Figures are float64 inside and rounded to whole bytes per
// second only where they leave the package (JSON, the API).
//
// The model is per node on the server side (Hardware.Servers) so that stage 2, where every
// node has its own measured link and device figures, reuses the formulas of stage 1; the
// uniform hardware block of a spec is expanded into it by Uniform.Expand.
package limits
