// Package liveowner guards the creation of children that no owner reference can clean up.
//
// Most of a burst buffer's task pods (and the beegfs engine's Secrets and ConfigMaps) live in
// the operator's namespace, where an owner reference to the burst buffer (in the user's
// namespace) is not allowed: the garbage collector does not delete them when the burst buffer
// goes, only the operator does. A visit that reads the burst buffer from a cache that lags
// behind its deletion could create such a child after the last teardown step, and then
// nothing would ever delete it. So a child created in a namespace other than its burst
// buffer's is created only while that burst buffer - the same object, by UID - is still there,
// read from the API server: once per visit that creates any (ForVisit).
package liveowner

import (
	"context"
	"errors"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/nodetask"
)

// visit remembers, for one visit, the burst buffers found live. Visits of one burst buffer
// never overlap (the controller works on one key at a time) and only a visit removes its
// finalizer (short of a person's patch), so one that was there at a visit's first creation
// is there for the whole visit: its other creations need not ask again.
type visit struct {
	mu   sync.Mutex
	live map[types.UID]bool
}

type visitKey struct{}

// ForVisit returns ctx for one visit: the first creation of a child of a burst buffer reads
// it from the API server, the others of the same visit trust that read.
func ForVisit(ctx context.Context) context.Context {
	return context.WithValue(ctx, visitKey{}, &visit{live: map[types.UID]bool{}})
}

// ErrOwnerGone is returned instead of creating a child whose burst buffer is gone.
var ErrOwnerGone = errors.New("the burst buffer is gone")

// Client is a client.Client whose Create of a child outside its burst buffer's namespace first
// checks, with Reader (the API server, past any cache), that the burst buffer exists.
type Client struct {
	client.Client
	Reader client.Reader
}

// Wrap returns c guarded, with r as the live reader; c itself when r is nil.
func Wrap(c client.Client, r client.Reader) client.Client {
	if r == nil {
		return c
	}
	if g, ok := c.(Client); ok {
		c = g.Client
	}
	return Client{Client: c, Reader: r}
}

// Create creates obj, unless it is a child of a burst buffer that is gone (ErrOwnerGone).
func (c Client) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if err := c.check(ctx, obj); err != nil {
		return err
	}
	return c.Client.Create(ctx, obj, opts...)
}

// check is nil for an object in its burst buffer's namespace (its owner reference lets the
// garbage collector remove it) or one that names no burst buffer, and for one whose burst
// buffer is there and not done with its teardown.
func (c Client) check(ctx context.Context, obj client.Object) (err error) {
	l := obj.GetLabels()
	ns, name, uid := l[nodetask.LabelBurstBufferNamespace], l[v1alpha1.LabelBurstBuffer], l[nodetask.LabelBurstBufferUID]
	if ns == "" || name == "" || uid == "" || ns == obj.GetNamespace() {
		return nil
	}
	if v, ok := ctx.Value(visitKey{}).(*visit); ok {
		// Held through the read: the visit's parallel creations wait for the first one's.
		v.mu.Lock()
		defer v.mu.Unlock()
		if v.live[types.UID(uid)] {
			return nil
		}
		defer func() {
			if err == nil {
				v.live[types.UID(uid)] = true
			}
		}()
	}
	var bb v1alpha1.BurstBuffer
	err = c.Reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &bb)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return err
	case bb.UID != types.UID(uid):
	case !bb.DeletionTimestamp.IsZero() && !controllerutil.ContainsFinalizer(&bb, v1alpha1.Finalizer):
	default:
		return nil
	}
	return fmt.Errorf("not creating %s/%s: %w (%s/%s, uid %s)", obj.GetNamespace(), obj.GetName(), ErrOwnerGone, ns, name, uid)
}
