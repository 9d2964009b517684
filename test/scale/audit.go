package main

import (
	"bufio"
	"encoding/json"
	"os"
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
	RequestReceived time.Time `json:"requestReceivedTimestamp"`
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

// readAudit counts the manager's completed requests in the audit log, per window. A watch
// completes when it ends (the manager stopped, or the API server closed it): it counts in the
// window in which it was opened.
func readAudit(path string, windows []window) (map[string]requestCounts, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]requestCounts{}
	for _, w := range windows {
		out[w.name] = requestCounts{}
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
				out[w.name][key]++
			}
		}
	}
	return out, sc.Err()
}
