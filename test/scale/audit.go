package main

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"time"
)

// auditEvent is what the harness reads of an audit log line.
type auditEvent struct {
	Stage string `json:"stage"`
	Verb  string `json:"verb"`
	User  struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	RequestReceived time.Time         `json:"requestReceivedTimestamp"`
	StageTime       time.Time         `json:"stageTimestamp"`
	Annotations     map[string]string `json:"annotations"`
}

// writeVerbs are the requests whose time the API server spends writing to etcd.
var writeVerbs = map[string]bool{"create": true, "update": true, "patch": true, "delete": true}

// auditRead is what the audit log says of the manager's requests: counts per window, and the
// API server's time (received to response complete) for each of its writes per window, in
// seconds.
type auditRead struct {
	counts map[string]requestCounts
	writes map[string][]float64
	slow   map[string]*slowWrites
}

// The API server breaks a request's time down by layer (its latency trackers) in the audit
// event's annotations, only for requests that took longer than slowWrite.
const (
	slowWrite     = 500 * time.Millisecond
	latencyPrefix = "apiserver.latency.k8s.io/"
)

// slowWrites sums the API server's own breakdown of the manager's writes slower than
// slowWrite: where their time went, by the layers it tracks, in seconds.
type slowWrites struct {
	n                           int
	total, queue, etcd, tracked float64 // tracked: every layer, queue and etcd included
}

// add counts one slow write from its annotations; one without the API server's breakdown
// (latency tracking off) is left out.
func (s *slowWrites) add(ann map[string]string) {
	total, err := time.ParseDuration(ann[latencyPrefix+"total"])
	if err != nil {
		return
	}
	s.n++
	s.total += total.Seconds()
	for k, v := range ann {
		layer, ok := strings.CutPrefix(k, latencyPrefix)
		d, err := time.ParseDuration(v)
		if !ok || layer == "total" || err != nil {
			continue
		}
		s.tracked += d.Seconds()
		switch layer {
		case "apf-queue-wait":
			s.queue += d.Seconds()
		case "etcd":
			s.etcd += d.Seconds()
		}
	}
}

// requestCounts are the manager's API requests by verb and resource, per window of the run.
type requestCounts map[string]int

func (r requestCounts) total() int {
	n := 0
	for _, v := range r {
		n += v
	}
	return n
}

// window is a part of the run: requests received in [from, to).
type window struct {
	name     string
	from, to time.Time
}

// readAudit counts the manager's completed requests in the audit log, per window, and times
// its writes. A watch completes when it ends (the manager stopped, or the API server closed
// it): it counts in the window in which it was opened.
func readAudit(path string, windows []window) (auditRead, error) {
	f, err := os.Open(path)
	if err != nil {
		return auditRead{}, err
	}
	defer f.Close()
	out := auditRead{counts: map[string]requestCounts{}, writes: map[string][]float64{}, slow: map[string]*slowWrites{}}
	for _, w := range windows {
		out.counts[w.name] = requestCounts{}
		out.slow[w.name] = &slowWrites{}
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev auditEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			continue
		}
		if ev.Stage != "ResponseComplete" || ev.User.Username != managerUser {
			continue
		}
		res := "(non-resource)"
		if ev.ObjectRef != nil {
			res = ev.ObjectRef.Resource
			if ev.ObjectRef.Subresource != "" {
				res += "/" + ev.ObjectRef.Subresource
			}
		}
		key := ev.Verb + " " + res
		for _, w := range windows {
			if !ev.RequestReceived.Before(w.from) && ev.RequestReceived.Before(w.to) {
				out.counts[w.name][key]++
				if writeVerbs[ev.Verb] {
					took := ev.StageTime.Sub(ev.RequestReceived)
					out.writes[w.name] = append(out.writes[w.name], took.Seconds())
					if took > slowWrite {
						out.slow[w.name].add(ev.Annotations)
					}
				}
			}
		}
	}
	return out, sc.Err()
}
