package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The manager's slow-visit lines are counted per window and grouped by what they mostly
// waited for; other lines are not.
func TestReadSlowVisits(t *testing.T) {
	log := `{"level":"info","ts":"2026-11-28T04:00:01Z","msg":"slow visit","controller":"burstbuffer","took":"1.2s","phase":"Measuring","apiRequests":136,"mostly":"create pods","requests":"create pods x135 (9.1s in all, max 0.4s); update leases x1 (20ms in all, max 20ms)"}
{"level":"info","ts":"2026-11-28T04:00:02Z","msg":"slow visit","controller":"burstbuffer","took":"300ms","phase":"Measuring","apiRequests":0,"mostly":"none","requests":""}
{"level":"info","ts":"2026-11-28T04:00:03Z","msg":"phase changed","controller":"burstbuffer"}
{"level":"info","ts":"2026-11-28T04:00:09Z","msg":"slow visit","controller":"burstbuffer","took":"2s","phase":"Terminating","apiRequests":40,"mostly":"delete pods","requests":"delete pods x40 (3s in all, max 0.5s)"}
not json
`
	path := filepath.Join(t.TempDir(), "manager.log")
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	at := func(s int) time.Time { return time.Date(2026, 11, 28, 4, 0, s, 0, time.UTC) }
	got, err := readSlowVisits(path, []window{{"run", at(0), at(60)}, {"toReady", at(0), at(5)}})
	if err != nil {
		t.Fatal(err)
	}
	if r := got["run"]; r.n != 3 || r.total != 3500*time.Millisecond {
		t.Errorf("run: %d visits, %s in all; want 3, 3.5s", r.n, r.total)
	}
	r := got["toReady"]
	if r.n != 2 || r.by["create pods"] == nil || r.by["create pods"].max != 1200*time.Millisecond || r.by["none"].n != 1 || r.by["delete pods"] != nil {
		t.Errorf("toReady: %+v; want the pod creates' visit and the one that sent nothing", r)
	}
}
