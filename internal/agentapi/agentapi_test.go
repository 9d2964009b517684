package agentapi

import (
	"reflect"
	"testing"
	"time"
)

func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		3 * time.Second: "3s", time.Minute: "1m", 90 * time.Second: "90s", 8760 * time.Hour: "8760h",
		500 * time.Millisecond: "500ms", 1500 * time.Millisecond: "1.5s",
	} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%v) = %q, want %q", d, got, want)
		}
		if back, err := time.ParseDuration(Duration(d)); err != nil || back != d {
			t.Errorf("%q parses to %v, %v", Duration(d), back, err)
		}
	}
}

// TestZeroLeavesDefaults: a zero field is not written, so the agent's default applies; shard
// 0 of a shared copy is written.
func TestZeroLeavesDefaults(t *testing.T) {
	for _, c := range []struct {
		req  Request
		want []string
	}{
		{Ideal{Dir: "/bb"}, []string{"ideal", "--dir", "/bb"}},
		{NetServer{}, []string{"net-server"}},
		{Stage{Pairs: []Pair{{"/a", "/b"}}, Of: 2}, []string{"stage", "--from", "/a", "--to", "/b", "--shard", "0", "--of", "2"}},
		{DirRemove{Path: "/p/beeburst/ns.bb", Globals: Globals{Timeout: time.Minute}}, []string{"dir", "remove", "--path", "/p/beeburst/ns.bb", "--timeout", "1m"}},
	} {
		if got := c.req.Args(); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%T: %q, want %q", c.req, got, c.want)
		}
	}
}
