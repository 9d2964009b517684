package controllers

import (
	"fmt"
	"slices"
	"strings"

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

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
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

// truncateMsg cuts s to at most n bytes (the CRD's MaxLength of a status message).
func truncateMsg(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - 3
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "..."
}
