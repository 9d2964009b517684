package shorten

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestShorten(t *testing.T) {
	long := strings.Repeat("a", 500)
	for _, tc := range []struct {
		name, got, want string
	}{
		{"cut short enough", Cut("abc", 3), "abc"},
		{"cut", Cut("abcdef", 5), "ab..."},
		{"cut at a rune boundary", Cut("aé"+"xyz", 5), "a..."},
		{"cut without a limit", Cut(long, 0), long},
		{"first line", FirstLine("  one\ntwo  ", 10), "one"},
		{"first line cut", FirstLine(long+"\nb", 300), long[:297] + "..."},
		{"one line", OneLine(" a \n\t b  c ", 10), "a b c"},
		{"one line cut", OneLine(long, 400), long[:397] + "..."},
		{"middle short", Middle("a\nb", 300), "a b"},
		{"middle", Middle(strings.Repeat("x", 200)+strings.Repeat("y", 200), 300), strings.Repeat("x", 100) + " ... " + strings.Repeat("y", 195)},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, tc.got, tc.want)
		}
		if !utf8.ValidString(tc.got) {
			t.Errorf("%s: invalid UTF-8", tc.name)
		}
	}
	if got := Middle(strings.Repeat("é", 300), 300); !utf8.ValidString(got) || len(got) > 300 {
		t.Errorf("middle of runes: %d bytes, valid %v", len(got), utf8.ValidString(got))
	}
}
