package controllers

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

func (s *scope) nodeObj(name string) *corev1.Node {
	for i := range s.nodeObjs {
		if s.nodeObjs[i].Name == name {
			return &s.nodeObjs[i]
		}
	}
	return nil
}

// nodeIdentities are the burst buffer's nodes, in order, as name/UID of their Node objects:
// what a kept validation is of (a machine registered again under the same name is another
// node). A node whose object is gone counts by its name alone.
func (s *scope) nodeIdentities() []string {
	out := make([]string, len(s.nodes))
	for i, name := range s.nodes {
		out[i] = name
		if obj := s.nodeObj(name); obj != nil && obj.UID != "" {
			out[i] = name + "/" + string(obj.UID)
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
