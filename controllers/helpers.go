package controllers

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
)

func (s *scope) nodeObj(name string) *corev1.Node {
	for i := range s.nodeObjs {
		if s.nodeObjs[i].Name == name {
			return &s.nodeObjs[i]
		}
	}
	return nil
}

// nodeIdentities are the burst buffer's nodes, in order, as name/UID of their Node objects
// with their hardware.beeburst.io/* labels: what a kept validation is of. A machine registered
// again under the same name is another node, and a node relabelled has other documented
// figures, which a kept validation's stage 1 and warnings (BelowDocumented) were judged by. A
// node whose object is gone counts by its name alone.
func (s *scope) nodeIdentities() []string {
	hardwareLabels := []string{v1alpha1.LabelLinkRateBitsPerSecond, v1alpha1.LabelLinkEncoding,
		v1alpha1.LabelDiskWriteBytesPerSecond, v1alpha1.LabelDiskReadBytesPerSecond}
	out := make([]string, len(s.nodes))
	for i, name := range s.nodes {
		out[i] = name
		obj := s.nodeObj(name)
		if obj == nil {
			continue
		}
		if obj.UID != "" {
			out[i] += "/" + string(obj.UID)
		}
		var labels []string
		for _, k := range hardwareLabels {
			if v, ok := obj.Labels[k]; ok {
				labels = append(labels, k+"="+v)
			}
		}
		if len(labels) > 0 {
			out[i] += "/" + strings.Join(labels, ",")
		}
	}
	return out
}

func positive(v int64) *int64 {
	if v <= 0 {
		return nil
	}
	return &v
}

func count(m map[string]bool) int {
	n := 0
	for _, v := range m {
		if v {
			n++
		}
	}
	return n
}

func limit(items []string, n int) []string {
	if len(items) <= n {
		return items
	}
	return append(slices.Clone(items[:n]), fmt.Sprintf("and %d more", len(items)-n))
}

// messageMax bounds a line quoted from a pod, an event or a tool in a status message.
const messageMax = 300
