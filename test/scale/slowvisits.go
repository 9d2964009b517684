package main

import (
	"bufio"
	"encoding/json"
	"os"
	"time"
)

// slowVisitThreshold is what the harness passes to the manager's --slow-visit-log: the
// reconcile-time goal, so that every visit over it says what it waited for.
const slowVisitThreshold = 250 * time.Millisecond

// slowVisit is one "slow visit" line of the manager's log (controllers/slowvisit.go).
type slowVisit struct {
	at     time.Time
	took   time.Duration
	mostly string // the requests that took longest in all, "none" when it sent none
}

// slowVisitGroup sums the slow visits whose longest requests were of one kind.
type slowVisitGroup struct {
	n          int
	total, max time.Duration
}

// slowVisits are a window's slow visits, grouped by what they mostly waited for.
type slowVisits struct {
	n     int
	total time.Duration
	by    map[string]*slowVisitGroup
}

func (s *slowVisits) add(v slowVisit) {
	s.n++
	s.total += v.took
	g := s.by[v.mostly]
	if g == nil {
		g = &slowVisitGroup{}
		s.by[v.mostly] = g
	}
	g.n++
	g.total += v.took
	g.max = max(g.max, v.took)
}

// readSlowVisits reads the manager's log for its slow visits, per window (by the time each
// was logged, its end).
func readSlowVisits(path string, windows []window) (map[string]*slowVisits, error) {
	out := map[string]*slowVisits{}
	for _, w := range windows {
		out[w.name] = &slowVisits{by: map[string]*slowVisitGroup{}}
	}
	f, err := os.Open(path)
	if err != nil {
		return out, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		v, ok := parseSlowVisit(sc.Bytes())
		if !ok {
			continue
		}
		for _, w := range windows {
			if !v.at.Before(w.from) && v.at.Before(w.to) {
				out[w.name].add(v)
			}
		}
	}
	return out, sc.Err()
}

// parseSlowVisit reads one log line (the manager's JSON lines); false for any other line.
func parseSlowVisit(line []byte) (slowVisit, bool) {
	var l struct {
		Msg    string    `json:"msg"`
		TS     time.Time `json:"ts"`
		Took   string    `json:"took"`
		Mostly string    `json:"mostly"`
	}
	if json.Unmarshal(line, &l) != nil || l.Msg != "slow visit" {
		return slowVisit{}, false
	}
	took, err := time.ParseDuration(l.Took)
	if err != nil {
		return slowVisit{}, false
	}
	return slowVisit{at: l.TS, took: took, mostly: l.Mostly}, true
}
