package bench

import "strings"

type iperf3Output struct {
	Start struct {
		Version   string `json:"version"`
		TestStart struct {
			Protocol   string `json:"protocol"`
			NumStreams int    `json:"num_streams"`
			Reverse    int    `json:"reverse"`
		} `json:"test_start"`
		ConnectingTo struct {
			Host string `json:"host"`
		} `json:"connecting_to"`
	} `json:"start"`
	End struct {
		SumSent     *iperf3Sum `json:"sum_sent"`
		SumReceived *iperf3Sum `json:"sum_received"`
		Sum         *iperf3Sum `json:"sum"` // UDP
	} `json:"end"`
	Error *string `json:"error"`
}

type iperf3Sum struct {
	Seconds       float64 `json:"seconds"`
	Bytes         float64 `json:"bytes"`
	BitsPerSecond float64 `json:"bits_per_second"`
	Retransmits   int64   `json:"retransmits"`
}

// ParseIperf3 parses `iperf3 -J` output (client or server side). iperf3 exits 0 when it
// fails and says so in the "error" key, which is an error here. The result is a "transfer":
// received bits per second / 8 (end.sum_received) over all -P streams.
func ParseIperf3(out []byte) (*Parsed, error) {
	var o iperf3Output
	if err := decodeJSONObject(ToolIperf3, out, &o); err != nil {
		return nil, err
	}
	if o.Error != nil {
		msg := strings.TrimSpace(*o.Error)
		if msg == "" {
			msg = "(empty)"
		}
		return nil, perr(ToolIperf3, "the test failed: %s", msg)
	}
	if strings.EqualFold(o.Start.TestStart.Protocol, "UDP") {
		return nil, perr(ToolIperf3, "UDP results are not supported (run TCP)")
	}
	s := o.End.SumReceived
	if s == nil {
		return nil, perr(ToolIperf3, "no end.sum_received in output (truncated or interrupted test)")
	}
	if !finitePositive(s.BitsPerSecond) || !finitePositive(s.Seconds) || !finitePositive(s.Bytes) {
		return nil, perr(ToolIperf3, "end.sum_received has no data (bytes %v in %v s)", s.Bytes, s.Seconds)
	}
	if err := checkBounds(s.BitsPerSecond/8, 0, 0, s.Seconds); err != nil {
		return nil, perr(ToolIperf3, "end.sum_received: %v", err)
	}
	bytes, err := count(ToolIperf3, "end.sum_received.bytes", s.Bytes)
	if err != nil {
		return nil, err
	}
	r := Result{
		Operation:      OpTransfer,
		BytesPerSecond: s.BitsPerSecond / 8,
		RuntimeSeconds: s.Seconds,
		Bytes:          bytes,
		Processes:      o.Start.TestStart.NumStreams,
	}
	if o.End.SumSent != nil {
		r.Retransmits = o.End.SumSent.Retransmits
	}
	p := &Parsed{Tool: ToolIperf3, Version: o.Start.Version, Results: []Result{r}}
	return p.finish()
}
