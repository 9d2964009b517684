// Package beegfs is the BeeGFS engine: an ad-hoc BeeGFS 8 instance over the burst buffer's
// nodes in BeeOND's layout.
//
// This version does not provision BeeGFS yet. It says so in the Provisioned condition with
// reason NotImplemented and a terminal result, instead of pretending to be Ready, so a user
// learns at once to choose engine: local.
package beegfs

import (
	"context"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/engine"
)

// Engine is the beegfs engine.
type Engine struct{}

var _ engine.Engine = Engine{}

// Provision reports that BeeGFS provisioning is not implemented.
func (Engine) Provision(context.Context, *v1alpha1.BurstBuffer, []string) (engine.Result, error) {
	return engine.Result{
		Reason:   v1alpha1.ReasonNotImplemented,
		Message:  "this beeburst version does not provision BeeGFS yet (no services, no client mounts); create the burst buffer with spec.engine: local",
		Terminal: true,
	}, nil
}

// Teardown has nothing to remove: Provision created nothing.
func (Engine) Teardown(context.Context, *v1alpha1.BurstBuffer, []string) (bool, error) {
	return true, nil
}
