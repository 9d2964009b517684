package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// readAudit counts the manager's requests per window and sums the API server's own breakdown
// of its slow writes; other users' requests and the stages before completion are ignored.
func TestReadAudit(t *testing.T) {
	log := `{"stage":"ResponseComplete","verb":"create","user":{"username":"system:serviceaccount:beeburst-system:beeburst-manager"},"objectRef":{"resource":"pods"},"requestReceivedTimestamp":"2026-11-28T04:00:00.000000Z","stageTimestamp":"2026-11-28T04:00:01.000000Z","annotations":{"apiserver.latency.k8s.io/total":"1s","apiserver.latency.k8s.io/apf-queue-wait":"100ms","apiserver.latency.k8s.io/etcd":"50ms","apiserver.latency.k8s.io/serialize-response-object":"250µs","authorization.k8s.io/decision":"allow"}}
{"stage":"ResponseComplete","verb":"patch","user":{"username":"system:serviceaccount:beeburst-system:beeburst-manager"},"objectRef":{"resource":"burstbuffers","subresource":"status"},"requestReceivedTimestamp":"2026-11-28T04:00:02.000000Z","stageTimestamp":"2026-11-28T04:00:02.020000Z"}
{"stage":"ResponseComplete","verb":"get","user":{"username":"system:serviceaccount:beeburst-system:beeburst-manager"},"objectRef":{"resource":"configmaps"},"requestReceivedTimestamp":"2026-11-28T04:00:03.000000Z","stageTimestamp":"2026-11-28T04:00:04.000000Z"}
{"stage":"ResponseComplete","verb":"create","user":{"username":"admin"},"objectRef":{"resource":"pods"},"requestReceivedTimestamp":"2026-11-28T04:00:00.000000Z","stageTimestamp":"2026-11-28T04:00:09.000000Z"}
{"stage":"ResponseStarted","verb":"create","user":{"username":"system:serviceaccount:beeburst-system:beeburst-manager"},"objectRef":{"resource":"pods"},"requestReceivedTimestamp":"2026-11-28T04:00:00.000000Z","stageTimestamp":"2026-11-28T04:00:09.000000Z"}
`
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	at := func(s string) time.Time { v, _ := time.Parse(time.RFC3339, s); return v }
	got, err := readAudit(path, []window{
		{"all", at("2026-11-28T03:00:00Z"), at("2026-11-28T05:00:00Z")},
		{"late", at("2026-11-28T04:00:02Z"), at("2026-11-28T05:00:00Z")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if c := got.counts["all"]; c.total() != 3 || c["create pods"] != 1 || c["patch burstbuffers/status"] != 1 || c["get configmaps"] != 1 {
		t.Errorf("counts: %v", c)
	}
	if w := got.writes["all"]; len(w) != 2 || w[0] != 1 || w[1] < 0.019 || w[1] > 0.021 {
		t.Errorf("write seconds: %v", w)
	}
	s := got.slow["all"]
	if s.n != 1 || s.total != 1 || s.queue != 0.1 || s.etcd != 0.05 || s.tracked < 0.15024 || s.tracked > 0.15026 {
		t.Errorf("slow writes: %+v", *s)
	}
	if got.slow["late"].n != 0 || got.counts["late"].total() != 2 {
		t.Errorf("window late: %+v, %v", *got.slow["late"], got.counts["late"])
	}
}
