package main

import (
	"fmt"
	"io"
	"reflect"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/beeburst/beeburst/internal/agentapi"
)

// TestContractRoundTrip: every request the operator can send, with every field set, parsed
// by the agent's own commands and flag sets, gives back the request. A flag renamed on one
// side, a field the request does not render, or a subcommand the agent does not have fails
// here, not in a pod on a node.
func TestContractRoundTrip(t *testing.T) {
	for _, c := range []struct {
		req  agentapi.Request
		back func(*pflag.FlagSet) agentapi.Request
	}{
		{filled(agentapi.ProbeDevice{}), func(f *pflag.FlagSet) agentapi.Request {
			return agentapi.ProbeDevice{Dir: str(f, agentapi.FlagDir), Runtime: dur(f, agentapi.FlagRuntime), Jobs: num(f, agentapi.FlagJobs),
				BlockSize: str(f, agentapi.FlagBlockSize), LinkAddress: str(f, agentapi.FlagLinkAddress), Globals: globalsOf(f)}
		}},
		{filled(agentapi.NetServer{}), func(f *pflag.FlagSet) agentapi.Request {
			return agentapi.NetServer{Port: num(f, agentapi.FlagPort), OneOff: boolean(f, agentapi.FlagOneOff), Globals: globalsOf(f)}
		}},
		{filled(agentapi.NetClient{}), func(f *pflag.FlagSet) agentapi.Request {
			return agentapi.NetClient{Host: str(f, agentapi.FlagHost), Port: num(f, agentapi.FlagPort), Streams: num(f, agentapi.FlagStreams),
				Time: dur(f, agentapi.FlagTime), ConnectTimeout: dur(f, agentapi.FlagConnectTimeout), Globals: globalsOf(f)}
		}},
		{filled(agentapi.Ideal{}), func(f *pflag.FlagSet) agentapi.Request {
			return agentapi.Ideal{Dir: str(f, agentapi.FlagDir), Procs: num(f, agentapi.FlagProcs), Runtime: dur(f, agentapi.FlagRuntime),
				BlockSize: str(f, agentapi.FlagBlockSize), Globals: globalsOf(f)}
		}},
		{filled(agentapi.Workload{}), func(f *pflag.FlagSet) agentapi.Request {
			return agentapi.Workload{Kind: str(f, agentapi.FlagKind), Dir: str(f, agentapi.FlagDir), Procs: num(f, agentapi.FlagProcs),
				Runtime: dur(f, agentapi.FlagRuntime), Globals: globalsOf(f)}
		}},
		{filled(agentapi.Stage{}), func(f *pflag.FlagSet) agentapi.Request {
			from, _ := f.GetStringArray(agentapi.FlagFrom)
			to, _ := f.GetStringArray(agentapi.FlagTo)
			var pairs []agentapi.Pair
			for i := range min(len(from), len(to)) {
				pairs = append(pairs, agentapi.Pair{From: from[i], To: to[i]})
			}
			return agentapi.Stage{Pairs: pairs, MissingOK: boolean(f, agentapi.FlagMissingOK), BeeGFS: str(f, agentapi.FlagBeeGFS), Shard: num(f, agentapi.FlagShard),
				Of: num(f, agentapi.FlagOf), Globals: globalsOf(f)}
		}},
		{filled(agentapi.DirCreate{}), func(f *pflag.FlagSet) agentapi.Request {
			return agentapi.DirCreate{Path: str(f, agentapi.FlagPath), Globals: globalsOf(f)}
		}},
		{filled(agentapi.DirRemove{}), func(f *pflag.FlagSet) agentapi.Request {
			return agentapi.DirRemove{Path: str(f, agentapi.FlagPath), Globals: globalsOf(f)}
		}},
		{filled(agentapi.CheckModule{}), func(f *pflag.FlagSet) agentapi.Request {
			return agentapi.CheckModule{Name: str(f, agentapi.FlagName), MachineUUID: boolean(f, agentapi.FlagMachineUUID), FreePath: str(f, agentapi.FlagFreePath), Globals: globalsOf(f)}
		}},
	} {
		name := reflect.TypeOf(c.req).Name()
		t.Run(name, func(t *testing.T) {
			args := c.req.Args()
			cmd, rest, err := newRoot(io.Discard).Find(args)
			if err != nil {
				t.Fatalf("%q: %v", args, err)
			}
			if !cmd.Runnable() {
				t.Fatalf("%q: %q is not a subcommand that runs", args, cmd.CommandPath())
			}
			if err := cmd.ParseFlags(rest); err != nil {
				t.Fatalf("%q: %v", args, err)
			}
			if err := cmd.ValidateRequiredFlags(); err != nil {
				t.Fatalf("%q: %v", args, err)
			}
			if extra := cmd.Flags().Args(); len(extra) > 0 {
				t.Fatalf("%q: the agent takes %q as positional arguments", args, extra)
			}
			if got := c.back(cmd.Flags()); !reflect.DeepEqual(got, c.req) {
				t.Errorf("%q parsed by the agent gives\n%+v, want\n%+v", args, got, c.req)
			}
		})
	}
}

// filled sets every field of a request to a value that is not the agent's default, so that a
// field left out of Args (or read back under another flag) shows.
func filled[T agentapi.Request](req T) T {
	v := reflect.ValueOf(&req).Elem()
	fill(v, new(int))
	return req
}

func fill(v reflect.Value, n *int) {
	for i := range v.NumField() {
		f, name := v.Field(i), v.Type().Field(i).Name
		*n++
		switch {
		case f.Type() == reflect.TypeFor[time.Duration]():
			f.SetInt(int64(time.Duration(*n) * time.Second))
		case f.Kind() == reflect.Struct:
			fill(f, n)
		case f.Kind() == reflect.String:
			f.SetString(fmt.Sprintf("/v/%s-%d", name, *n))
		case f.Kind() == reflect.Int:
			f.SetInt(int64(7000 + *n))
		case f.Kind() == reflect.Bool:
			f.SetBool(true)
		case f.Type() == reflect.TypeFor[[]string]():
			f.Set(reflect.ValueOf([]string{fmt.Sprintf("%s-%d", name, *n), "x"}))
		case f.Type() == reflect.TypeFor[[]agentapi.Pair]():
			f.Set(reflect.ValueOf([]agentapi.Pair{{From: "/a", To: "s3://b/c"}, {From: "/d", To: "/e"}}))
		default:
			panic("fill: no value for field " + name)
		}
	}
}

func str(f *pflag.FlagSet, name string) string { v, _ := f.GetString(name); return v }
func list(f *pflag.FlagSet, name string) []string {
	v, _ := f.GetStringSlice(name)
	return v
}
func num(f *pflag.FlagSet, name string) int      { v, _ := f.GetInt(name); return v }
func boolean(f *pflag.FlagSet, name string) bool { v, _ := f.GetBool(name); return v }
func dur(f *pflag.FlagSet, name string) time.Duration {
	v, _ := f.GetDuration(name)
	return v
}

func globalsOf(f *pflag.FlagSet) agentapi.Globals {
	return agentapi.Globals{Timeout: dur(f, agentapi.FlagTimeout), MonitorInterval: dur(f, agentapi.FlagMonitorInterval),
		Chain: agentapi.Chain{Dir: str(f, agentapi.FlagChainDir), Name: str(f, agentapi.FlagChainName),
			After: list(f, agentapi.FlagChainAfter), StartWith: list(f, agentapi.FlagChainStartWith),
			HoldFor: list(f, agentapi.FlagChainHoldFor), Shared: boolean(f, agentapi.FlagChainShared)}}
}
