// Package apitrace records the API requests one visit of a controller makes, and how long
// each took, so that a slow visit can say what it waited for: the pods it created, the locks
// it took, a list that went past the cache. The reconcile-time histogram says that visits
// are slow; this says why, per visit.
//
// Transport wraps the manager's HTTP transport (rest.Config.Wrap) and records each request
// whose context carries a Visit (Start); the informers' lists and watches carry none and are
// not recorded. Recording is an append under a mutex: cheap enough to leave on.
package apitrace

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// Visit collects the requests of one visit. Safe for concurrent use: a visit sends its
// independent writes several at a time.
type Visit struct {
	mu       sync.Mutex
	requests []Request
}

// Request is one API request: its verb and resource (as the API server's audit log names
// them: "create pods", "patch burstbuffers/status") and how long it took, until the response's
// headers arrived.
type Request struct {
	Verb, Resource string
	Took           time.Duration
}

type visitKey struct{}

// Start returns ctx carrying a new Visit, which records the requests sent with it.
func Start(ctx context.Context) (context.Context, *Visit) {
	v := &Visit{}
	return context.WithValue(ctx, visitKey{}, v), v
}

func from(ctx context.Context) *Visit {
	v, _ := ctx.Value(visitKey{}).(*Visit)
	return v
}

func (v *Visit) add(r Request) {
	v.mu.Lock()
	v.requests = append(v.requests, r)
	v.mu.Unlock()
}

// Group is the requests of one verb and resource in a visit.
type Group struct {
	Verb, Resource string
	Count          int
	// Total is the sum of the requests' times (more than the time they held the visit when
	// they ran at once); Max the longest.
	Total, Max time.Duration
}

// Summary is a visit's requests grouped by verb and resource, the group that took longest in
// all first.
func (v *Visit) Summary() []Group {
	v.mu.Lock()
	defer v.mu.Unlock()
	byKey := map[string]*Group{}
	var out []*Group
	for _, r := range v.requests {
		k := r.Verb + " " + r.Resource
		g := byKey[k]
		if g == nil {
			g = &Group{Verb: r.Verb, Resource: r.Resource}
			byKey[k] = g
			out = append(out, g)
		}
		g.Count++
		g.Total += r.Took
		g.Max = max(g.Max, r.Took)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Total > out[j].Total })
	groups := make([]Group, len(out))
	for i, g := range out {
		groups[i] = *g
	}
	return groups
}

// Format renders groups for a log line: "create pods x135 (4.2s in all, max 0.61s); update
// leases x27 (...)".
func Format(groups []Group) string {
	parts := make([]string, len(groups))
	for i, g := range groups {
		parts[i] = fmt.Sprintf("%s %s x%d (%s in all, max %s)", g.Verb, g.Resource, g.Count, round(g.Total), round(g.Max))
	}
	return strings.Join(parts, "; ")
}

func round(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(10 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}

// Transport returns rt recording each request sent with a Visit in its context. Its
// signature is rest.Config.Wrap's.
func Transport(rt http.RoundTripper) http.RoundTripper {
	return roundTripper{rt}
}

type roundTripper struct{ next http.RoundTripper }

func (t roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	v := from(req.Context())
	if v == nil {
		return t.next.RoundTrip(req)
	}
	start := time.Now()
	resp, err := t.next.RoundTrip(req)
	verb, resource := Kind(req.Method, req.URL.Path, req.URL.Query().Get("watch") == "true")
	v.add(Request{Verb: verb, Resource: resource, Took: time.Since(start)})
	return resp, err
}

// Kind names a request to the API server as its audit log does: the verb from the method
// and whether a name follows the resource, the resource with its subresource
// ("burstbuffers/status"). Paths outside the resource API ("/version") are verb "get" of
// the path itself.
func Kind(method, path string, watch bool) (verb, resource string) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	// /api/v1/... or /apis/<group>/<version>/...
	var rest []string
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		rest = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		rest = parts[3:]
	default:
		return strings.ToLower(method), path
	}
	if len(rest) > 2 && rest[0] == "namespaces" {
		rest = rest[2:] // a namespaced resource; "namespaces/<name>" alone is the namespace
	}
	if len(rest) == 0 {
		return strings.ToLower(method), path
	}
	resource = rest[0]
	named := len(rest) >= 2
	if len(rest) >= 3 {
		resource += "/" + rest[2]
	}
	switch method {
	case http.MethodGet:
		switch {
		case watch:
			verb = "watch"
		case named:
			verb = "get"
		default:
			verb = "list"
		}
	case http.MethodPost:
		verb = "create"
	case http.MethodPut:
		verb = "update"
	case http.MethodPatch:
		verb = "patch"
	case http.MethodDelete:
		verb = "delete"
		if !named {
			verb = "deletecollection"
		}
	default:
		verb = strings.ToLower(method)
	}
	return verb, resource
}
