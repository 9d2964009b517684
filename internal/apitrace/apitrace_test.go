package apitrace

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

func TestKind(t *testing.T) {
	for _, c := range []struct {
		method, path   string
		watch          bool
		verb, resource string
	}{
		{"POST", "/api/v1/namespaces/ns/pods", false, "create", "pods"},
		{"GET", "/api/v1/namespaces/ns/pods", false, "list", "pods"},
		{"GET", "/api/v1/namespaces/ns/pods", true, "watch", "pods"},
		{"GET", "/api/v1/namespaces/ns/pods/p", false, "get", "pods"},
		{"DELETE", "/api/v1/namespaces/ns/pods/p", false, "delete", "pods"},
		{"DELETE", "/api/v1/namespaces/ns/pods", false, "deletecollection", "pods"},
		{"PATCH", "/apis/beeburst.io/v1alpha1/namespaces/ns/burstbuffers/bb/status", false, "patch", "burstbuffers/status"},
		{"PUT", "/apis/coordination.k8s.io/v1/namespaces/ns/leases/l", false, "update", "leases"},
		{"GET", "/api/v1/persistentvolumes/pv", false, "get", "persistentvolumes"},
		{"GET", "/api/v1/nodes", false, "list", "nodes"},
		{"GET", "/api/v1/namespaces/ns", false, "get", "namespaces"},
		{"GET", "/api/v1/namespaces/ns/events", false, "list", "events"},
		{"GET", "/version", false, "get", "/version"},
	} {
		verb, resource := Kind(c.method, c.path, c.watch)
		if verb != c.verb || resource != c.resource {
			t.Errorf("Kind(%s %s, watch %v) = %q %q, want %q %q", c.method, c.path, c.watch, verb, resource, c.verb, c.resource)
		}
	}
}

// Requests sent with a visit's context are recorded, concurrent ones too; others are not.
func TestTransportRecordsVisitRequests(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			time.Sleep(20 * time.Millisecond)
		}
	}))
	defer srv.Close()
	c := &http.Client{Transport: Transport(http.DefaultTransport)}
	send := func(ctx context.Context, method, path string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, method, srv.URL+path, nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Error(err)
			return
		}
		resp.Body.Close()
	}
	ctx, v := Start(context.Background())
	var wg sync.WaitGroup
	for range 5 {
		wg.Go(func() { send(ctx, http.MethodPost, "/api/v1/namespaces/ns/pods") })
	}
	wg.Wait()
	send(ctx, http.MethodPatch, "/apis/beeburst.io/v1alpha1/namespaces/ns/burstbuffers/bb/status")
	send(context.Background(), http.MethodGet, "/api/v1/namespaces/ns/pods") // an informer's: no visit

	got := v.Summary()
	if len(got) != 2 {
		t.Fatalf("Summary() = %+v, want two groups", got)
	}
	if g := got[0]; g.Verb != "create" || g.Resource != "pods" || g.Count != 5 || g.Max < 20*time.Millisecond || g.Total < 5*20*time.Millisecond {
		t.Errorf("first group %+v, want the five pod creates of 20 ms or more each, longest in all first", g)
	}
	if g := got[1]; g.Verb != "patch" || g.Resource != "burstbuffers/status" || g.Count != 1 {
		t.Errorf("second group %+v, want the status patch", g)
	}
	if s := Format(got[1:]); s == "" || s[:len("patch burstbuffers/status x1 (")] != "patch burstbuffers/status x1 (" {
		t.Errorf("Format = %q", s)
	}
}
