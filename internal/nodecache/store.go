package nodecache

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Store reads and writes the per-node entries in one namespace.
type Store struct {
	Client    client.Client
	Namespace string
}

// Get returns node's entry; false when there is none or it cannot be read.
func (s Store) Get(ctx context.Context, node string) (Figures, bool) {
	var cm corev1.ConfigMap
	if err := s.Client.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: Name(node)}, &cm); err != nil {
		return Figures{}, false
	}
	f, err := Read(&cm)
	return f, err == nil
}

// Update changes node's entry with change, from what it holds now (nothing: the zero Figures
// of the node): the device figures and the metadata figure are written by different
// measurements, and neither may drop the other. An entry that cannot be read is replaced. The
// update carries the entry's resourceVersion, so a write in between fails it and the caller's
// next visit changes the newer entry.
func (s Store) Update(ctx context.Context, node string, change func(*Figures)) error {
	var cur corev1.ConfigMap
	err := s.Client.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: Name(node)}, &cur)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	exists := err == nil
	f := Figures{Node: node}
	if exists {
		if old, rerr := Read(&cur); rerr == nil {
			f = old
		}
	}
	change(&f)
	f.Node = node
	cm, err := ConfigMap(s.Namespace, f)
	if err != nil {
		return err
	}
	if !exists {
		return s.Client.Create(ctx, cm)
	}
	cur.Data = cm.Data
	cur.Labels = cm.Labels
	return s.Client.Update(ctx, &cur)
}
