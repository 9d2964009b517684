// Package shorten makes text short enough for a status message, an event or a log line.
package shorten

import (
	"strings"
	"unicode/utf8"
)

// Ellipsis marks where text was cut.
const Ellipsis = "..."

// Cut returns s if it has at most n bytes, else its start cut at a rune boundary and ended
// with Ellipsis, n bytes in all. n <= 0: s whole.
func Cut(s string, n int) string {
	if n <= 0 || len(s) <= n {
		return s
	}
	cut := n - len(Ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:max(cut, 0)] + Ellipsis
}

// FirstLine is the first line of s without surrounding space, Cut to n bytes.
func FirstLine(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return Cut(s, n)
}

// OneLine is s with every run of white space (line breaks too) made one space, Cut to n bytes.
func OneLine(s string, n int) string {
	return Cut(strings.Join(strings.Fields(s), " "), n)
}

// Middle is s on one line like OneLine, but when it is longer than n bytes it keeps its start
// and its end (where a tool's output says what went wrong) with " ... " between them.
func Middle(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if n <= 0 || len(s) <= n {
		return s
	}
	const gap = " ... "
	head := n / 3
	tail := n - head - len(gap)
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	start := len(s) - tail
	for start < len(s) && !utf8.RuneStart(s[start]) {
		start++
	}
	return s[:head] + gap + s[start:]
}
