package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
)

// kubeconfig has two contexts: a (current, namespace team-a) and b (namespace team-b).
const kubeconfig = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: not-used}}]
contexts:
- {name: a, context: {cluster: c, user: u, namespace: team-a}}
- {name: b, context: {cluster: c, user: u, namespace: team-b}}
current-context: a
`

// cluster is a fake API server holding testdata/scratch.yaml (a Ready burst buffer and its
// sweep's ConfigMap), edited by the test; it records the keys the plugin asked for.
type cluster struct {
	t       *testing.T
	bb      *v1alpha1.BurstBuffer
	cm      *corev1.ConfigMap
	asked   []client.ObjectKey
	created bool
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	c := &cluster{t: t}
	r := utilyaml.NewYAMLReader(bufioReader(mustRead(t, "testdata/scratch.yaml")))
	for {
		doc, err := r.Read()
		if err != nil {
			break
		}
		if strings.Contains(string(doc), "kind: BurstBuffer") {
			c.bb = &v1alpha1.BurstBuffer{}
			if err := yaml.UnmarshalStrict(doc, (*strictBurstBuffer)(c.bb)); err != nil {
				t.Fatal(err)
			}
		} else if strings.Contains(string(doc), "kind: ConfigMap") {
			c.cm = &corev1.ConfigMap{}
			if err := yaml.UnmarshalStrict(doc, c.cm); err != nil {
				t.Fatal(err)
			}
		}
	}
	if c.bb == nil || c.cm == nil {
		t.Fatal("testdata/scratch.yaml lacks the BurstBuffer or the ConfigMap")
	}
	return c
}

type strictBurstBuffer v1alpha1.BurstBuffer

func (c *cluster) newClient(cf *genericclioptions.ConfigFlags) (client.Reader, error) {
	c.created = true
	// The flags reach the REST config as kubectl's would.
	cfg, err := cf.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	if cfg.Host != "https://127.0.0.1:1" || cfg.BearerToken != "not-used" {
		c.t.Errorf("REST config host %q token %q", cfg.Host, cfg.BearerToken)
	}
	scheme := runtime.NewScheme()
	_ = v1alpha1.AddToScheme(scheme)
	_ = corev1.AddToScheme(scheme)
	b := fake.NewClientBuilder().WithScheme(scheme)
	if c.bb != nil {
		b = b.WithObjects(c.bb)
	}
	if c.cm != nil {
		b = b.WithObjects(c.cm)
	}
	return recorder{Reader: b.Build(), c: c}, nil
}

type recorder struct {
	client.Reader
	c *cluster
}

func (r recorder) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	r.c.asked = append(r.c.asked, key)
	return r.Reader.Get(ctx, key, obj, opts...)
}

func (c *cluster) run(args ...string) (code int, stdout, stderr string) {
	c.t.Helper()
	kc := writeFile(c.t, "kubeconfig", kubeconfig)
	var out, errOut bytes.Buffer
	code = runWith(append([]string{"limits", "--kubeconfig", kc}, args...), strings.NewReader(""), &out, &errOut, c.newClient)
	return code, out.String(), errOut.String()
}

func row(out, label string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, label) {
			return l
		}
	}
	return ""
}

func TestLimitsTable(t *testing.T) {
	c := newCluster(t)
	code, out, errOut := c.run("scratch")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"BurstBuffer team-a/scratch: local, phase Ready", "STAGE 1 ESTIMATED  STAGE 2 COMPONENTS  STAGE 3 SWEEP",
		"301.583 MB/s at 2 nodes x 4 processes", "worker-2", "150 MB/s -> 152.634 MB/s (+2%)"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	// The plateau's figure comes from the sweep's ConfigMap: the status names only its point.
	if p := row(out, "plateau (95% of B)"); !strings.HasSuffix(p, "2 nodes x 1 process = 2 processes, 290 MB/s") {
		t.Errorf("plateau row %q", p)
	}
	if strings.Contains(out, "STAGE 3 SWEEP WRITE") {
		t.Error("the default table shows the grid, which is -o wide's")
	}
	if len(c.asked) != 2 || c.asked[0] != (client.ObjectKey{Namespace: "team-a", Name: "scratch"}) || c.asked[1].Name != "scratch-sweep" {
		t.Errorf("asked for %v", c.asked)
	}

	// Without the ConfigMap the table still comes, says why the figure is missing, and does
	// not print "unknown" for it.
	c = newCluster(t)
	c.cm = nil
	code, out, errOut = c.run("scratch")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if p := row(out, "plateau (95% of B)"); !strings.HasSuffix(p, "2 nodes x 1 process = 2 processes") {
		t.Errorf("plateau row without the ConfigMap %q", p)
	}
	if !strings.Contains(out, "sweep points: the sweep's ConfigMap team-a/scratch-sweep is gone") {
		t.Errorf("no word about the missing ConfigMap:\n%s", out)
	}
}

// The kubeconfig flags are kubectl's: the context's namespace, --context, -n.
func TestLimitsConfigFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		ns   string
	}{
		{nil, "team-a"},
		{[]string{"--context", "b"}, "team-b"},
		{[]string{"-n", "team-c"}, "team-c"},
		{[]string{"--context", "b", "--namespace", "team-a"}, "team-a"},
	} {
		c := newCluster(t)
		code, _, errOut := c.run(append([]string{"scratch"}, tc.args...)...)
		if len(c.asked) == 0 || c.asked[0].Namespace != tc.ns {
			t.Errorf("%v: asked for %v, want namespace %s", tc.args, c.asked, tc.ns)
		}
		if (code == 0) != (tc.ns == "team-a") {
			t.Errorf("%v: exit %d %s", tc.args, code, errOut)
		}
		if tc.ns != "team-a" && (code != 1 || !strings.Contains(errOut, `"scratch" not found`)) {
			t.Errorf("%v: exit %d, stderr %q", tc.args, code, errOut)
		}
	}
	var out bytes.Buffer
	runWith([]string{"limits", "--help"}, strings.NewReader(""), &out, &out, nil)
	for _, flag := range []string{"--kubeconfig", "--context", "-n, --namespace", "--cluster", "--user", "--request-timeout",
		"-o, --output", "--template", "--plot"} {
		if !strings.Contains(out.String(), flag) {
			t.Errorf("limits --help lacks %s", flag)
		}
	}
}

func TestLimitsOutputFormats(t *testing.T) {
	c := newCluster(t)
	code, out, errOut := c.run("scratch", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		Name  string
		Write struct {
			LimitBytesPerSecond int64
			Measured            struct {
				BestBytesPerSecond, PlateauBytesPerSecond int64
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if doc.Name != "scratch" || doc.Write.LimitBytesPerSecond != 300e6 || doc.Write.Measured.BestBytesPerSecond != 301583000 ||
		doc.Write.Measured.PlateauBytesPerSecond != 290e6 {
		t.Errorf("json %+v", doc)
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"-o", "yaml"}, []string{"name: scratch\n", "plateauBytesPerSecond: 290000000\n", "limitBytesPerSecond: 300000000\n"}},
		{[]string{"-o", "jsonpath={.write.measured.best}"}, []string{`{"nodes":2,"processesPerNode":4}`}},
		{[]string{"-o", "go-template", "--template", "{{.read.limitBytesPerSecond}}"}, []string{"600000000"}},
		{[]string{"-o", "table"}, []string{"STAGE 1 ESTIMATED"}},
		{[]string{"-o", "wide"}, []string{"STAGE 1 ESTIMATED", "STAGE 3 SWEEP WRITE  N=1        N=4\n",
			"M=2                  290 MB/s+  301.583 MB/s*\n", "STAGE 3 SWEEP READ", "598 MB/s*+", "* best B, + plateau",
			"598 MB/s*+\n  M nodes x N processes per node; * best B, + plateau (the first point reaching 95% of B)\n\nWARNINGS\n"}},
	} {
		code, out, errOut := newCluster(t).run(append([]string{"scratch"}, tc.args...)...)
		if code != 0 {
			t.Errorf("%v: exit %d: %s", tc.args, code, errOut)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: output lacks %q:\n%s", tc.args, w, out)
			}
		}
	}
}

func TestLimitsPlot(t *testing.T) {
	dir := t.TempDir()
	c := newCluster(t)
	pngFile := filepath.Join(dir, "scratch.png")
	code, out, errOut := c.run("scratch", "--plot", pngFile)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "STAGE 1 ESTIMATED") || errOut != "plot: "+pngFile+" (8 points)\n" {
		t.Errorf("stdout %q stderr %q", out, errOut)
	}
	f, err := os.Open(pngFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Errorf("not a PNG: %v", err)
	}

	svgFile := filepath.Join(dir, "scratch.svg")
	c = newCluster(t)
	c.bb.Status.Limits.Sweep.CutShort = true
	if code, _, errOut := c.run("scratch", "--plot", svgFile, "-o", "json"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	svg := mustRead(t, svgFile)
	for _, want := range []string{"BurstBuffer team-a/scratch: the stage-3 sweep", "points: ConfigMap team-a/scratch-sweep; phase Ready",
		"cut short by the time budget", "stage 1 limit 300 MB/s (devices)", "stage 2 limit 303.376 MB/s (devices)",
		"stage 3 measured B 301.583 MB/s (2 nodes x 4 processes)", "Write: aggregate", "Read: aggregate", "from 2 nodes x 1 process<"} {
		if !strings.Contains(svg, want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
}

func TestLimitsInvalid(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*cluster)
		args []string
		code int
		want string
	}{
		{"plot file", nil, []string{"--plot", "x.gif"}, 2, "cannot draw .gif"},
		{"plot without extension", nil, []string{"--plot", "x"}, 2, "must end in .png or .svg"},
		{"output", nil, []string{"-o", "xml"}, 2, `--output must be one of table, wide, json, yaml`},
		{"output name", nil, []string{"-o", "name"}, 2, `not "name"`},
		{"no name", nil, []string{}, 2, "accepts 1 arg"},
		{"not found", nil, []string{"other"}, 1, `"other" not found`},
		{"plot without a sweep", func(c *cluster) { c.bb.Status.Limits.Sweep = nil; c.cm = nil }, []string{"--plot", "x.png"}, 1,
			`--plot: no sweep: burst buffer team-a/scratch has not published a stage-3 sweep (phase Ready, profile "quick")`},
		{"plot without the ConfigMap", func(c *cluster) { c.cm = nil }, []string{"--plot", "x.png"}, 1,
			"--plot: the sweep's ConfigMap team-a/scratch-sweep is gone"},
		{"garbled ConfigMap", func(c *cluster) {
			c.cm.Data["sweep.csv"] = "nodes,processesPerNode,operation,bytesPerSecond\n2,4,write,fast\n"
		},
			[]string{"--plot", "x.png"}, 1, "ConfigMap team-a/scratch-sweep: sweep CSV: line 2: bytesPerSecond"},
		{"ConfigMap without the key", func(c *cluster) { c.cm.Data = nil }, []string{"--plot", "x.png"}, 1, "has no key sweep.csv"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t)
			if tc.edit != nil {
				tc.edit(c)
			}
			args := tc.args
			if len(args) > 0 && args[0] == "--plot" {
				args = append([]string{"scratch", "--plot", filepath.Join(t.TempDir(), args[1])}, args[2:]...)
			} else if tc.name != "no name" && tc.name != "not found" {
				args = append([]string{"scratch"}, args...)
			}
			code, _, errOut := c.run(args...)
			if code != tc.code || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errOut, tc.code, tc.want)
			}
			if tc.code == 2 && c.created {
				t.Error("invalid input reached the cluster")
			}
		})
	}
}

func bufioReader(s string) *bufio.Reader { return bufio.NewReader(strings.NewReader(s)) }

// With no API server at the kubeconfig's address, the error names the address.
func TestLimitsUnreachable(t *testing.T) {
	kc := writeFile(t, "kubeconfig", kubeconfig)
	var out, errOut bytes.Buffer
	code := runWith([]string{"limits", "scratch", "--kubeconfig", kc, "--request-timeout", "5s"}, strings.NewReader(""), &out, &errOut, newClient)
	if code != 1 || !strings.Contains(errOut.String(), "cannot reach the cluster at https://127.0.0.1:1 (KUBECONFIG, --kubeconfig, --context)") {
		t.Errorf("exit %d, stderr %q", code, errOut.String())
	}
}

// The chunk size chosen (layout.chunkSizePolicy Auto) and the comparison (validation.compareWith)
// come with the table.
func TestLimitsChunkSizeAndComparison(t *testing.T) {
	c := newCluster(t)
	score, w, r, bw, ow, ratio := int32(1180), int64(1.3e9), int64(2.2e9), int64(3.4e9), int64(1e9), int32(3400)
	c.bb.Status.ChunkSize = &v1alpha1.ChunkSizeStatus{Size: resource.MustParse("4Mi"), Policy: v1alpha1.ChunkSizeAuto, Pattern: v1alpha1.PatternLargeSequential,
		Message: "4Mi chosen for large sequential I/O",
		Candidates: []v1alpha1.ChunkSizeCandidate{{Size: resource.MustParse("512Ki"), Message: "run failed: node a: fio: no space"},
			{Size: resource.MustParse("4Mi"), WriteBytesPerSecond: &w, ReadBytesPerSecond: &r, ScorePerMille: &score, Chosen: true}}}
	c.bb.Status.Comparison = &v1alpha1.ComparisonStatus{With: "claim results", Workload: "1 node(s) x 4 process(es)",
		Operations: []v1alpha1.ComparedOperation{{Operation: "write", BurstBufferBytesPerSecond: &bw, OtherBytesPerSecond: &ow, RatioPerMille: &ratio}},
		Message:    "the burst buffer is 3.4x faster than claim results for large sequential writes"}
	code, out, errOut := c.run("scratch")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"chunk size 4Mi (Auto, LargeSequential): 4Mi chosen for large sequential I/O",
		"chunk size 512Ki: run failed: node a: fio: no space",
		"chunk size 4Mi: write 1.3 GB/s, read 2.2 GB/s, score 1.18, chosen",
		"compared with claim results (1 node(s) x 4 process(es))",
		"write: burst buffer 3.4 GB/s, claim results 1 GB/s (x3.40)",
		"the burst buffer is 3.4x faster than claim results",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// `kubectl beeburst limits <TAB>` offers the burst buffers of the namespace.
func TestLimitsCompletesNames(t *testing.T) {
	c := newCluster(t)
	kc := writeFile(t, "kubeconfig", kubeconfig)
	var out, errOut bytes.Buffer
	code := runWith([]string{"__complete", "limits", "--kubeconfig", kc, "-n", c.bb.Namespace, "scr"}, strings.NewReader(""), &out, &errOut, c.newClient)
	if code != 0 || !strings.Contains(out.String(), c.bb.Name+"\n") {
		t.Errorf("exit %d, %q %q: want %s offered", code, out.String(), errOut.String(), c.bb.Name)
	}
	out.Reset()
	code = runWith([]string{"__complete", "limits", "--kubeconfig", kc, "-n", c.bb.Namespace, "other"}, strings.NewReader(""), &out, &errOut, c.newClient)
	if code != 0 || strings.Contains(out.String(), c.bb.Name) {
		t.Errorf("exit %d, %q: offered a name not starting with the prefix", code, out.String())
	}
}
