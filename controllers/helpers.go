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
