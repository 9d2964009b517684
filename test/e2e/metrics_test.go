package e2e

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	. "github.com/onsi/gomega"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
)

// scrapeManager reads the manager's /metrics through the API server's service proxy (the
// chart's beeburst-manager-metrics Service), as Prometheus would read it from the Service.
func scrapeManager() string {
	out, err := kubectl("get", "--raw",
		"/api/v1/namespaces/"+operatorNamespace+"/services/beeburst-manager-metrics:metrics/proxy/metrics")
	Expect(err).NotTo(HaveOccurred(), "scraping the manager: %s", out)
	return out
}

var labelPair = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"`)

// gauge is the value of the one series of family name whose labels include want; ok is
// false when there is none. Text exposition format: name{labels} value.
func gauge(scrape, name string, want map[string]string) (float64, bool) {
	for _, line := range strings.Split(scrape, "\n") {
		if !strings.HasPrefix(line, name+"{") {
			continue
		}
		end := strings.LastIndex(line, "}")
		if end < 0 {
			continue
		}
		got := map[string]string{}
		for _, m := range labelPair.FindAllStringSubmatch(line[len(name)+1:end], -1) {
			got[m[1]] = m[2]
		}
		match := true
		for k, v := range want {
			match = match && got[k] == v
		}
		if !match {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(line[end+1:]), 64)
		Expect(err).NotTo(HaveOccurred(), "%s", line)
		return v, true
	}
	return 0, false
}

// checkMetricsAgainstStatus: a scrape of the manager shows the limit
// gauges of a Ready burst buffer with the same values as its status.
func checkMetricsAgainstStatus(bb *v1alpha1.BurstBuffer) {
	scrape := scrapeManager()
	l := bb.Status.Limits
	compared := 0
	stages := map[string]map[string]*v1alpha1.OperationLimit{}
	if l.Estimated != nil {
		stages["estimated"] = map[string]*v1alpha1.OperationLimit{"write": &l.Estimated.Write, "read": &l.Estimated.Read}
	}
	if l.Components != nil {
		stages["components"] = map[string]*v1alpha1.OperationLimit{"write": l.Components.Write, "read": l.Components.Read}
	}
	for stage, ops := range stages {
		for op, ol := range ops {
			if ol == nil || ol.LimitBytesPerSecond <= 0 {
				continue
			}
			want := map[string]string{"namespace": bb.Namespace, "burstbuffer": bb.Name, "stage": stage, "operation": op}
			v, ok := gauge(scrape, "beeburst_burstbuffer_limit_bytes_per_second", want)
			Expect(ok).To(BeTrue(), "no limit gauge %v in the scrape", want)
			Expect(v).To(Equal(float64(ol.LimitBytesPerSecond)), "gauge %v against status", want)
			fmt.Printf("metrics: limit %s %s = %.0f B/s, as in the status\n", stage, op, v)
			compared++
		}
	}
	Expect(compared).To(BeNumerically(">=", 2), "a Ready burst buffer has stage-1 and stage-2 limits")
	v, ok := gauge(scrape, "beeburst_burstbuffer_status_phase", map[string]string{"namespace": bb.Namespace, "burstbuffer": bb.Name, "phase": string(v1alpha1.PhaseReady)})
	Expect(ok && v == 1).To(BeTrue(), "phase gauge of a Ready burst buffer")
}
