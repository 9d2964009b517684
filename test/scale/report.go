package main

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// header says what ran where: the report's first lines.
func header(o options, host string, now time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "beeburst control plane at scale (make bench-scale)\n")
	fmt.Fprintf(&b, "date: %s   machine: %s (%s)\n", now.UTC().Format("2006-01-02 15:04 MST"), host, machine())
	fmt.Fprintf(&b, "control plane: envtest's kube-apiserver and etcd (%s); the manager as its service account (token; RBAC and API Priority and Fairness as deployed), its requests from the API server's audit log\n", o.kubeBin)
	fmt.Fprintf(&b, "manager: %s (cmd/manager) in its own process, with the operator's RBAC (config/rbac); memory and CPU from /proc; reconciles from its metrics endpoint\n", o.manager)
	fmt.Fprintf(&b, "kubelet: test/scale/kubelet, simulated: no containers; pending, running, the exit with the agent's report from a per-node model, the phase; the quick profile's chain honoured; real time\n")
	fmt.Fprintf(&b, "load: engine local, profile %s, %d-%d nodes each (uniform; the least used nodes, as a scheduler's allocation), %g per second, %.0f%% deleted 2-12 s after creation;\n",
		o.validation, o.minNodes, o.maxNodes, o.rate, 100*o.deleteShare)
	fmt.Fprintf(&b, "      once all are Ready, idle (%s, measured from 10 s after the last Ready), then all deleted at %g per second.\n", o.idle, o.rate)
	fmt.Fprintf(&b, "      The control plane, the kubelet and the manager share the machine's CPUs with whatever else runs there (its load is in the table).\n")
	return b.String()
}

// machine describes the CPUs and memory.
func machine() string {
	model := ""
	if raw, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(raw), "\n") {
			if strings.HasPrefix(l, "model name") {
				if _, v, ok := strings.Cut(l, ":"); ok {
					model = strings.TrimSpace(v)
					break
				}
			}
		}
	}
	mem := ""
	if raw, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int64
		if _, err := fmt.Sscanf(strings.SplitN(string(raw), "\n", 2)[0], "MemTotal: %d kB", &kb); err == nil {
			mem = fmt.Sprintf(", %.0f GiB", float64(kb)/(1<<20))
		}
	}
	return fmt.Sprintf("%d CPUs %s%s, %s/%s, %s", runtime.NumCPU(), model, mem, runtime.GOOS, runtime.GOARCH, runtime.Version())
}

// table formats the results side by side, one column per size.
func table(results []*result) string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	row := func(label string, f func(r *result) string) {
		cols := []string{label}
		for _, r := range results {
			cols = append(cols, f(r))
		}
		fmt.Fprintln(w, strings.Join(cols, "\t")+"\t")
	}
	section := func(label string) { row(label, func(*result) string { return "" }) }
	n := func(r *result) float64 { return float64(r.size.bbs) }

	row("size", func(r *result) string { return fmt.Sprintf("%d bb / %d nodes", r.size.bbs, r.size.nodes) })
	row("  nodes per burst buffer (mean, max)", func(r *result) string {
		s, m := 0, 0
		for _, x := range r.sizes {
			s, m = s+x, max(m, x)
		}
		return fmt.Sprintf("%.1f, %d", float64(s)/float64(len(r.sizes)), m)
	})
	row("  deleted mid-way (before Ready)", func(r *result) string { return fmt.Sprint(r.deletedMidway) })
	row("  not Ready in time", func(r *result) string { return fmt.Sprint(len(r.notReady)) })
	row("  machine load (1 min): start, all Ready, end", func(r *result) string { return strings.Join(r.load[:], ", ") })

	section("time")
	row("  all created, after the first create", func(r *result) string { return secs(r.allCreated.Sub(r.start)) })
	row("  last Ready, after the first create", func(r *result) string { return secs(r.allReady.Sub(r.start)) })
	row("  create -> Ready p50 / p90 / max", func(r *result) string {
		var d []float64
		for _, t := range r.bbs {
			if !t.deleted && !t.ready.IsZero() {
				d = append(d, t.ready.Sub(t.created).Seconds())
			}
		}
		return fmt.Sprintf("%s / %s / %s", secsF(pct(d, 0.5)), secsF(pct(d, 0.9)), secsF(pct(d, 1)))
	})
	row("  create -> first status (stage 1) p50 / p90 / max", func(r *result) string {
		var d []float64
		for _, t := range r.bbs {
			if !t.visited.IsZero() {
				d = append(d, t.visited.Sub(t.created).Seconds())
			}
		}
		return fmt.Sprintf("%s / %s / %s", secsF(pct(d, 0.5)), secsF(pct(d, 0.9)), secsF(pct(d, 1)))
	})
	row("  teardown: all gone after the first delete", func(r *result) string { return secs(r.allGone.Sub(r.teardownStart)) })

	section("manager (its own process)")
	row("  RSS peak (VmHWM)", func(r *result) string { return mib(r.peakRSS) })
	row("  RSS at all Ready / at the end", func(r *result) string { return mib(r.rssAtReady) + " / " + mib(r.rssAtEnd) })
	row("  Go heap in use at all Ready", func(r *result) string {
		return mib(int64(sumCounter(r.metricsAtReady, "go_memstats_heap_inuse_bytes", nil)))
	})
	row("  CPU seconds to all Ready / in all", func(r *result) string {
		return fmt.Sprintf("%.1f / %.1f", r.cpuAtReady.Seconds(), r.cpuTotal.Seconds())
	})
	row("  CPU seconds per burst buffer", func(r *result) string { return fmt.Sprintf("%.3f", r.cpuTotal.Seconds()/n(r)) })

	section("the machine's CPU, first create to all Ready")
	row("  busy, of all CPUs' time", func(r *result) string {
		m := r.machineToReady
		if m.total <= 0 {
			return "?"
		}
		return fmt.Sprintf("%.0f of %.0f s (%.0f%%)", m.busy.Seconds(), m.total.Seconds(), 100*m.busy.Seconds()/m.total.Seconds())
	})
	row("  kube-apiserver / etcd / manager / harness (kubelet) / rest", func(r *result) string {
		m := r.machineToReady
		// Everything else on the machine; the samples of /proc/stat and of the processes
		// are a moment apart, so it is never shown below 0.
		rest := max(0, m.busy-m.apiserver-m.etcd-m.manager-m.harness)
		return fmt.Sprintf("%.0f / %.0f / %.0f / %.0f / %.0f s", m.apiserver.Seconds(), m.etcd.Seconds(), m.manager.Seconds(), m.harness.Seconds(), rest.Seconds())
	})

	bbc := map[string]string{"controller": "burstbuffer"}
	section("reconciles (burstbuffer controller)")
	row("  per burst buffer: to Ready / idle / teardown", func(r *result) string {
		a := sumCounter(r.metricsAtReady, "controller_runtime_reconcile_total", bbc)
		i0 := sumCounter(r.metricsAtIdleStart, "controller_runtime_reconcile_total", bbc)
		i1 := sumCounter(r.metricsAtIdleEnd, "controller_runtime_reconcile_total", bbc)
		c := sumCounter(r.metricsAtEnd, "controller_runtime_reconcile_total", bbc)
		return fmt.Sprintf("%.1f / %.2f / %.1f", a/n(r), (i1-i0)/n(r), (c-i1)/n(r))
	})
	row("  reconcile time p50 / p99 (to Ready)", func(r *result) string {
		h := histogram(r.metricsAtReady, "controller_runtime_reconcile_time_seconds", bbc)
		return ms(quantile(h, 0.5)) + " / " + ms(quantile(h, 0.99))
	})
	// The share of visits the 250 ms goal holds for: with p99 above it, how far from it.
	row("  visits within 250 ms (to Ready)", func(r *result) string {
		h := histogram(r.metricsAtReady, "controller_runtime_reconcile_time_seconds", bbc)
		return fmt.Sprintf("%.1f%%", 100*shareWithin(h, 0.25))
	})
	row("  reconcile time p50 / p99 (whole run)", func(r *result) string {
		h := histogram(r.metricsAtEnd, "controller_runtime_reconcile_time_seconds", bbc)
		return ms(quantile(h, 0.5)) + " / " + ms(quantile(h, 0.99))
	})
	row("  queue wait p50 / p99 (whole run)", func(r *result) string {
		h := histogram(r.metricsAtEnd, "workqueue_queue_duration_seconds", map[string]string{"name": "burstbuffer"})
		return ms(quantile(h, 0.5)) + " / " + ms(quantile(h, 0.99))
	})
	row("  errors (whole run)", func(r *result) string {
		return fmt.Sprintf("%.0f", sumCounter(r.metricsAtEnd, "controller_runtime_reconcile_errors_total", bbc))
	})
	row("  workload controller: reconciles per bb, p99", func(r *result) string {
		wc := map[string]string{"controller": "workload"}
		h := histogram(r.metricsAtEnd, "controller_runtime_reconcile_time_seconds", wc)
		return fmt.Sprintf("%.1f, %s", sumCounter(r.metricsAtEnd, "controller_runtime_reconcile_total", wc)/n(r), ms(quantile(h, 0.99)))
	})

	// What the slow visits waited for: each visit over the goal, from the manager's own log
	// (--slow-visit-log), by the kind of request it spent longest on.
	section("visits over 250 ms (to Ready), by the requests they spent longest on: visits, time, longest")
	row("  in all: per burst buffer; their time", func(r *result) string {
		v := r.slowVisits["toReady"]
		return fmt.Sprintf("%.2f; %.1f s", float64(v.n)/n(r), v.total.Seconds())
	})
	var waited []string
	seen := map[string]bool{}
	for _, r := range results {
		for k := range r.slowVisits["toReady"].by {
			if !seen[k] {
				seen[k] = true
				waited = append(waited, k)
			}
		}
	}
	// The kinds that held visits longest in the last size first.
	last := results[len(results)-1].slowVisits["toReady"].by
	heldFor := func(k string) time.Duration {
		if g := last[k]; g != nil {
			return g.total
		}
		return 0
	}
	sort.Slice(waited, func(i, j int) bool {
		if ti, tj := heldFor(waited[i]), heldFor(waited[j]); ti != tj {
			return ti > tj
		}
		return waited[i] < waited[j]
	})
	for _, k := range waited {
		label := "  " + k
		if k == "none" {
			label = "  none (sent no request)"
		}
		row(label, func(r *result) string {
			g := r.slowVisits["toReady"].by[k]
			if g == nil {
				return "-"
			}
			return fmt.Sprintf("%d, %.1f s, max %.2f s", g.n, g.total.Seconds(), g.max.Seconds())
		})
	}

	section("API requests of the manager per burst buffer")
	row("  in all (to Ready + idle + teardown)", func(r *result) string { return fmt.Sprintf("%.1f", float64(r.requests["run"].total())/n(r)) })
	row("  to all Ready", func(r *result) string { return fmt.Sprintf("%.1f", float64(r.requests["toReady"].total())/n(r)) })
	row("  while idle, all burst buffers (per minute)", func(r *result) string {
		return fmt.Sprintf("%.0f", float64(r.requests["idle"].total())/r.idleEnd.Sub(r.idleStart).Minutes())
	})
	row("  teardown", func(r *result) string { return fmt.Sprintf("%.1f", float64(r.requests["teardown"].total())/n(r)) })
	// What a visit waits for: the API server's own time for each write it sends (received to
	// response complete, from the audit log), which a visit that writes one object per node
	// pays once per batch of parallel.AtOnce.
	row("  API server time per write p50 / p99 (to Ready)", func(r *result) string {
		w := r.writeSeconds["toReady"]
		return fmt.Sprintf("%s / %s", ms(pct(w, 0.5)), ms(pct(w, 0.99)))
	})
	// Where a slow write's time went, in the API server's own words (its latency trackers):
	// waiting in flow control (priority and fairness), in etcd, in the other layers it tracks,
	// or in none of them.
	row("  writes over 0.5 s (to Ready): count, sent while arriving", func(r *result) string {
		s, a := r.slowWrites["toReady"], r.slowWrites["arrivals"]
		return fmt.Sprintf("%d, %d", s.n, a.n)
	})
	row("  their time: flow control / etcd / other tracked / untracked", func(r *result) string {
		s := r.slowWrites["toReady"]
		if s.n == 0 || s.total == 0 {
			return "-"
		}
		share := func(v float64) string { return fmt.Sprintf("%.0f%%", 100*v/s.total) }
		return strings.Join([]string{share(s.queue), share(s.etcd), share(s.tracked - s.queue - s.etcd), share(s.total - s.tracked)}, " / ")
	})
	keys := map[string]bool{}
	for _, r := range results {
		for k := range r.requests["run"] {
			keys[k] = true
		}
	}
	var sorted []string
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		row("  "+k, func(r *result) string { return fmt.Sprintf("%.2f", float64(r.requests["run"][k])/n(r)) })
	}

	section("watch events per burst buffer (each of the manager's informers)")
	kinds := []string{"BurstBuffer", "Pod", "Lease", "ConfigMap", "Secret", "Node", "PersistentVolumeClaim"}
	row("  in all", func(r *result) string {
		s := int64(0)
		for _, v := range r.eventsTotal {
			s += v
		}
		return fmt.Sprintf("%.1f", float64(s)/n(r))
	})
	for _, k := range kinds {
		row("  "+k, func(r *result) string { return fmt.Sprintf("%.1f", float64(r.eventsTotal[k])/n(r)) })
	}

	section("objects at all Ready, per burst buffer Ready")
	var okinds []string
	for k := range results[0].objects {
		okinds = append(okinds, k)
	}
	sort.Strings(okinds)
	live := func(r *result) float64 { return float64(r.size.bbs - r.deletedMidway) }
	for _, k := range okinds {
		row("  "+k, func(r *result) string {
			return fmt.Sprintf("%.2f (%d)", float64(r.objects[k])/live(r), r.objects[k])
		})
	}

	section("simulated kubelet and garbage collector")
	row("  pods run / status patches / objects collected", func(r *result) string {
		return fmt.Sprintf("%d / %d / %d", r.kubeletPods, r.kubeletPatches, r.gcDeletes)
	})
	_ = w.Flush()

	for _, r := range results {
		if len(r.notReady) > 0 {
			fmt.Fprintf(&b, "\nnot Ready in time (%s): %s\n", r.size, strings.Join(limitList(r.notReady, 10), "; "))
		}
	}
	return b.String()
}

// goals holds the figures against the goals.
func goals(results []*result) string {
	var b strings.Builder
	b.WriteString("\ngoals\n")
	for _, r := range results {
		h := histogram(r.metricsAtEnd, "controller_runtime_reconcile_time_seconds", map[string]string{"controller": "burstbuffer"})
		p99 := quantile(h, 0.99)
		fmt.Fprintf(&b, "  %s: manager RSS peak %s (goal < 300 MiB: %s); reconcile p99 %s (goal < 250 ms: %s)\n", r.size,
			mib(r.peakRSS), yes(float64(r.peakRSS) < 300*(1<<20)), ms(p99), yes(p99 < 0.25))
	}
	if len(results) > 1 {
		a, z := results[0], results[len(results)-1]
		ra, rz := float64(a.requests["run"].total())/float64(a.size.bbs), float64(z.requests["run"].total())/float64(z.size.bbs)
		fmt.Fprintf(&b, "  requests per burst buffer: %.1f at %d, %.1f at %d (x%.2f for x%.0f burst buffers; goal: independent of how many exist)\n",
			ra, a.size.bbs, rz, z.size.bbs, rz/ra, float64(z.size.bbs)/float64(a.size.bbs))
	}
	return b.String()
}

func yes(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

func limitList(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(s[:n:n], fmt.Sprintf("and %d more", len(s)-n))
}

func pct(v []float64, q float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	sort.Float64s(v)
	i := int(math.Ceil(q*float64(len(v)))) - 1
	return v[max(0, min(i, len(v)-1))]
}

func secs(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }
func secsF(s float64) string      { return fmt.Sprintf("%.1f s", s) }
func mib(b int64) string          { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

func ms(s float64) string {
	if math.IsNaN(s) {
		return "-"
	}
	return fmt.Sprintf("%.1f ms", s*1000)
}
