package controllers

import (
	"context"
	"time"

	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/apitrace"
)

// logIfSlow logs a visit that began at start and took longer than threshold, with the API
// requests it made (grouped by verb and resource, the longest in all first; mostly names that
// group, "none" for a visit that sent no request) and the phase
// bb was in when the visit ended: what the visit waited for, where the reconcile-time
// histogram only says that it waited.
func logIfSlow(ctx context.Context, visit *apitrace.Visit, start time.Time, threshold time.Duration, bb *v1alpha1.BurstBuffer) {
	took := time.Since(start)
	if took <= threshold {
		return
	}
	groups := visit.Summary()
	n, mostly := 0, "none"
	for _, g := range groups {
		n += g.Count
	}
	if len(groups) > 0 {
		mostly = groups[0].Verb + " " + groups[0].Resource
	}
	logf.FromContext(ctx).Info("slow visit", "took", took.Round(time.Millisecond).String(), "phase", bb.Status.Phase,
		"apiRequests", n, "mostly", mostly, "requests", apitrace.Format(groups))
}
