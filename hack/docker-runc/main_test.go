package main

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestSpecFile(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
		ok   bool
	}{
		{[]string{"--root", "/r", "--log", "l", "create", "--bundle", "/b", "id"}, "/b/config.json", true},
		{[]string{"--systemd-cgroup", "create", "--bundle=/b", "id"}, "/b/config.json", true},
		{[]string{"run", "-b", "/b", "id"}, "/b/config.json", true},
		{[]string{"create", "id"}, "config.json", true},
		{[]string{"--root", "/r", "exec", "--process", "/tmp/p.json", "--detach", "id"}, "/tmp/p.json", true},
		{[]string{"exec", "id", "sh"}, "", false},
		{[]string{"start", "id"}, "", false},
		{[]string{"--version"}, "", false},
	} {
		got, ok := specFile(tc.args)
		if got != tc.want || ok != tc.ok {
			t.Errorf("specFile(%q) = %q, %v; want %q, %v", tc.args, got, ok, tc.want, tc.ok)
		}
	}
}

func TestFit(t *testing.T) {
	host := limits{
		caps:     map[string]bool{"CAP_CHOWN": true, "CAP_SYS_ADMIN": true},
		oomScore: 0,
		rlimits:  map[string]uint64{"RLIMIT_NOFILE": 524288},
	}
	in := `{"ociVersion":"1.0.2","process":{"oomScoreAdj":-999,
	  "capabilities":{"bounding":["CAP_CHOWN","CAP_SYS_RESOURCE","CAP_SYS_ADMIN"],"effective":["CAP_SYS_RESOURCE"]},
	  "rlimits":[{"type":"RLIMIT_NOFILE","hard":1048576,"soft":1048576},{"type":"RLIMIT_CORE","hard":18446744073709551615,"soft":0}]},
	  "linux":{"resources":{"memory":{"limit":9223372036854775807}}}}`
	out, changes, err := fit([]byte(in), host)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"dropped CAP_SYS_RESOURCE", "oomScoreAdj -999 -> 0", "RLIMIT_NOFILE hard 1048576 -> 524288", "RLIMIT_NOFILE soft 1048576 -> 524288"}
	if !reflect.DeepEqual(changes, want) {
		t.Errorf("changes = %q, want %q", changes, want)
	}
	var got struct {
		Process struct {
			OOMScoreAdj  int                 `json:"oomScoreAdj"`
			Capabilities map[string][]string `json:"capabilities"`
			Rlimits      []struct {
				Type       string
				Hard, Soft uint64
			} `json:"rlimits"`
		} `json:"process"`
		Linux struct {
			Resources struct {
				Memory struct{ Limit int64 }
			}
		} `json:"linux"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if b := got.Process.Capabilities["bounding"]; !reflect.DeepEqual(b, []string{"CAP_CHOWN", "CAP_SYS_ADMIN"}) {
		t.Errorf("bounding = %q", b)
	}
	if e := got.Process.Capabilities["effective"]; len(e) != 0 {
		t.Errorf("effective = %q, want empty", e)
	}
	if got.Process.Rlimits[1].Hard != 18446744073709551615 {
		t.Errorf("RLIMIT_CORE hard = %d: a limit the host has no entry for must stay exact", got.Process.Rlimits[1].Hard)
	}
	if got.Linux.Resources.Memory.Limit != 9223372036854775807 {
		t.Errorf("memory limit = %d: 64-bit values must stay exact", got.Linux.Resources.Memory.Limit)
	}
}

func TestFitLeavesAFittingSpecAlone(t *testing.T) {
	host := limits{caps: capsFromMask(^uint64(0)), rlimits: map[string]uint64{}}
	in := `{"args":["sh"],"capabilities":{"bounding":["CAP_SYS_RESOURCE"]},"oomScoreAdj":0}`
	out, changes, err := fit([]byte(in), host)
	if err != nil || len(changes) != 0 || string(out) != in {
		t.Errorf("fit = %s, %q, %v; want the input unchanged", out, changes, err)
	}
}

func TestCapsFromMask(t *testing.T) {
	// Our machines' bounding set: everything but CAP_SYS_RESOURCE (24).
	c := capsFromMask(0x000001fffeffffff)
	if c["CAP_SYS_RESOURCE"] || !c["CAP_SYS_ADMIN"] || !c["CAP_CHECKPOINT_RESTORE"] || len(c) != 40 {
		t.Errorf("capsFromMask: %d caps, SYS_RESOURCE=%v SYS_ADMIN=%v", len(c), c["CAP_SYS_RESOURCE"], c["CAP_SYS_ADMIN"])
	}
}
