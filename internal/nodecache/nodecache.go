// Package nodecache keeps a node's stage-2 (component) figures between burst buffers, so that
// back-to-back jobs on the same node do not probe it again. Figures live in one ConfigMap per
// node in the operator's namespace; this package builds and reads those ConfigMaps (pure).
package nodecache

import (
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/beeburst/beeburst/internal/bench"
)

// Key is the ConfigMap data key.
const Key = "components.json"

// Figures are one node's measured component figures. Zero means not measured.
type Figures struct {
	Node string `json:"node"`
	// StoragePath is the node-local path the device figures were measured on: a figure of
	// another path (another drive) must not be reused.
	StoragePath               string    `json:"storagePath"`
	MeasuredTime              time.Time `json:"measuredTime"`
	DeviceWriteBytesPerSecond int64     `json:"deviceWriteBytesPerSecond,omitempty"`
	DeviceReadBytesPerSecond  int64     `json:"deviceReadBytesPerSecond,omitempty"`
	NetworkBytesPerSecond     int64     `json:"networkBytesPerSecond,omitempty"`
	// FreeBytes is the space that was free on the storage path when it was probed.
	FreeBytes int64 `json:"freeBytes,omitempty"`
	// MeasuredBy names the burst buffer whose probe measured them (namespace/name).
	MeasuredBy string `json:"measuredBy,omitempty"`
	// Hardware is what the same probe discovered on the node (link speed, device model), so
	// that a reused result brings it along.
	Hardware *bench.Hardware `json:"hardware,omitempty"`
	// Conditions say under which conditions the figures were taken. Figures without them
	// (written by an operator before they existed) are never reused.
	Conditions *Conditions `json:"conditions,omitempty"`
}

// Conditions are the circumstances of a probe.
type Conditions struct {
	// StartTime is when the probe's container started (MeasuredTime is when it ended).
	StartTime time.Time `json:"startTime"`
	// Exclusive: the probe ran while its burst buffer held the node's measuring lock, so no
	// other burst buffer measured the node at the same time.
	Exclusive bool `json:"exclusive"`
	// Lock is the node's measuring Lease.
	Lock string `json:"lock,omitempty"`
	// OtherPods are other beeburst pods (other burst buffers' tasks and workloads) that ran
	// on the node while the probe ran. Figures with any are not kept for reuse; the list is
	// part of the record for the burst buffer that published them.
	OtherPods []string `json:"otherPods,omitempty"`
	// Probe is how the device was measured (tool and arguments), and Image the agent image
	// that ran it: a figure of another method is not the same figure.
	Probe string `json:"probe,omitempty"`
	Image string `json:"image,omitempty"`
}

// Alone says whether the probe had the node to itself.
func (c *Conditions) Alone() bool { return c != nil && c.Exclusive && len(c.OtherPods) == 0 }

// Name is the ConfigMap's name for a node.
func Name(node string) string { return "beeburst-node-" + node }

// ConfigMap builds the ConfigMap holding f.
func ConfigMap(namespace string, f Figures) (*corev1.ConfigMap, error) {
	b, err := json.Marshal(f)
	if err != nil {
		return nil, err
	}
	return &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name: Name(f.Node), Namespace: namespace,
			Labels: map[string]string{
				"app.kubernetes.io/name":       "beeburst",
				"app.kubernetes.io/component":  "node-figures",
				"app.kubernetes.io/managed-by": "beeburst-operator",
			},
		},
		Data: map[string]string{Key: string(b)},
	}, nil
}

// Read returns the figures in cm.
func Read(cm *corev1.ConfigMap) (Figures, error) {
	var f Figures
	raw, ok := cm.Data[Key]
	if !ok {
		return f, fmt.Errorf("configmap %s has no %s", cm.Name, Key)
	}
	if err := json.Unmarshal([]byte(raw), &f); err != nil {
		return f, fmt.Errorf("configmap %s: %w", cm.Name, err)
	}
	return f, nil
}

// Fresh says whether f can stand for a new probe of storagePath at now: young enough, of
// the same path, and taken by a probe that had the node to itself.
func (f Figures) Fresh(storagePath string, maxAge time.Duration, now time.Time) bool {
	return maxAge > 0 && f.StoragePath == storagePath && f.DeviceWriteBytesPerSecond > 0 &&
		f.DeviceReadBytesPerSecond > 0 && now.Sub(f.MeasuredTime) < maxAge && !f.MeasuredTime.After(now) &&
		f.Conditions.Alone()
}
