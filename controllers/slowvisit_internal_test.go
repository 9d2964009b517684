package controllers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/apitrace"
)

// A visit over the threshold is logged with what it sent, the kind it spent longest on
// first; one within it, or one that sent nothing yet was slow, as such. The requests go
// through a real HTTP round trip (a local server), as the manager's client sends them.
func TestSlowVisitLogged(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			time.Sleep(30 * time.Millisecond)
		}
	}))
	defer srv.Close()
	hc := &http.Client{Transport: apitrace.Transport(http.DefaultTransport)}
	var lines []string
	ctx := logf.IntoContext(context.Background(), funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{}))
	bb := &v1alpha1.BurstBuffer{Status: v1alpha1.BurstBufferStatus{Phase: v1alpha1.PhaseMeasuring}}
	visit := func(threshold time.Duration, requests ...string) {
		vctx, v := apitrace.Start(ctx)
		start := time.Now()
		for _, r := range requests {
			method, path, _ := strings.Cut(r, " ")
			req, _ := http.NewRequestWithContext(vctx, method, srv.URL+path, nil)
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		logIfSlow(vctx, v, start, threshold, bb)
	}

	visit(time.Hour, "POST /api/v1/namespaces/ns/pods")
	if len(lines) != 0 {
		t.Fatalf("a visit within the threshold was logged: %q", lines)
	}
	visit(time.Millisecond, "PATCH /apis/beeburst.io/v1alpha1/namespaces/ns/burstbuffers/bb/status",
		"POST /api/v1/namespaces/ns/pods", "POST /api/v1/namespaces/ns/pods")
	if len(lines) != 1 {
		t.Fatalf("want one line for the slow visit, got %q", lines)
	}
	for _, want := range []string{`"slow visit"`, `"phase"="Measuring"`, `"apiRequests"=3`, `"mostly"="create pods"`, `create pods x2 (`, `patch burstbuffers/status x1 (`} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("the line does not say %s: %s", want, lines[0])
		}
	}
	vctx, v := apitrace.Start(ctx)
	logIfSlow(vctx, v, time.Now().Add(-time.Second), time.Millisecond, bb)
	if len(lines) != 2 || !strings.Contains(lines[1], `"mostly"="none"`) || !strings.Contains(lines[1], `"apiRequests"=0`) {
		t.Errorf("a slow visit that sent nothing: %q", lines[1:])
	}
}
