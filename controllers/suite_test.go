package controllers_test

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/controllers"
)

// The suite runs a real kube-apiserver and etcd (envtest, built from source by
// `make envtest`) with the CRD from config/. There is no kubelet, scheduler or
// controller-manager: tests play their part through the API (node objects, pod phases),
// which is honest at this tier - the e2e suite runs the real thing.

// Bounds of the waits the operator puts a limit on, shortened for the suite.
const (
	teardownBound      = 6 * time.Second
	unschedulableBound = 3 * time.Second
	// schedulerGrace: how long deletion waits for a released pod the scheduler has not
	// placed (envtest has no scheduler: every released pod stays so).
	schedulerGrace = 5 * time.Second
)

var (
	cfg        *rest.Config
	k8s        client.Client
	testEnv    *envtest.Environment
	kubeconfig string
	scheme     = runtime.NewScheme()
	stopMgr    context.CancelFunc
	mgrDone    chan struct{}
	// mgrClient is the running manager's own client: its reads come from the manager's
	// cache, so a spec can wait until the manager sees a change that wakes no visit.
	mgrClient client.Client
)

func TestControllers(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "BurstBuffer controller (envtest)")
}

var _ = BeforeSuite(func() {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	Expect(os.Getenv("KUBEBUILDER_ASSETS")).NotTo(BeEmpty(),
		"KUBEBUILDER_ASSETS is not set: run the suite with `make test-envtest`, which builds kube-apiserver and etcd")
	Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	Expect(v1alpha1.AddToScheme(scheme)).To(Succeed())

	testEnv = &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	var err error
	cfg, err = testEnv.Start()
	Expect(err).NotTo(HaveOccurred())
	k8s, err = client.New(cfg, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
	kubeconfig = writeKubeconfig(cfg)
	Expect(k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNamespace}})).To(Succeed())
	startManager()
})

var _ = AfterSuite(func() {
	// Also after a failed BeforeSuite or a manager that would not stop: a started API server
	// must not outlive the suite.
	defer func() {
		if testEnv != nil {
			Expect(testEnv.Stop()).To(Succeed())
		}
	}()
	stopManager()
})

// managerRequests counts the API requests of the manager the suite runs (watches apart), by
// verb: a spec holds what a burst buffer costs the API server to a bound.
var managerRequests requestCounter

type requestCounter struct {
	mu     sync.Mutex
	byVerb map[string]int
	// byPath counts the writes (not GET, not WATCH) by the URL path they went to.
	byPath map[string]int
}

func (c *requestCounter) add(verb, path string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byVerb == nil {
		c.byVerb, c.byPath = map[string]int{}, map[string]int{}
	}
	c.byVerb[verb]++
	if verb != "GET" && verb != "WATCH" {
		c.byPath[path]++
	}
}

// writesTo is how many writes went to path, e.g. a burst buffer's status.
func (c *requestCounter) writesTo(path string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.byPath[path]
}

func (c *requestCounter) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.byVerb)
}

type countingTransport struct{ next http.RoundTripper }

func (t countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	verb := req.Method
	if req.URL.Query().Get("watch") == "true" {
		verb = "WATCH"
	}
	managerRequests.add(verb, req.URL.Path)
	return t.next.RoundTrip(req)
}

// startManager runs the operator in-process, configured as cmd/manager configures it.
func startManager() {
	mcfg := rest.CopyConfig(cfg)
	mcfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return countingTransport{rt} })
	mgr, err := ctrl.NewManager(mcfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// On a loaded 2-core machine the visits in flight can take longer than the default 30 s
		// to see their context end; stopManager waits a little longer still, then shows them.
		GracefulShutdownTimeout: ptr.To(shutdownGrace),
		Cache:                   controllers.CacheOptions(operatorNamespace),
		// The suite restarts the manager in-process; metric names would clash otherwise.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	Expect(err).NotTo(HaveOccurred())
	mgrClient = mgr.GetClient()
	Expect((&controllers.BurstBufferReconciler{
		Client:         mgr.GetClient(),
		Recorder:       mgr.GetEventRecorder("beeburst"),
		AgentImage:     "beeburst/agent:test",
		CacheNamespace: operatorNamespace,
		PodLogTail:     podLogs.tail,
		// Short bounds, so that the specs of stuck teardowns and copies run in seconds.
		TeardownTimeout:      teardownBound,
		UnschedulableTimeout: unschedulableBound,
		SchedulerGrace:       schedulerGrace,
		// The specs play pods' ends a fraction of a second apart: only a pod whose container
		// ran during a sweep run's window counts as beside it.
		PodSetupMargin: -1,
	}).SetupWithManager(mgr)).To(Succeed())
	Expect((&controllers.WorkloadReconciler{
		Client:   mgr.GetClient(),
		Recorder: mgr.GetEventRecorder("beeburst"),
	}).SetupWithManager(mgr)).To(Succeed())
	ctx, cancel := context.WithCancel(context.Background())
	stopMgr = cancel
	mgrDone = make(chan struct{})
	go func() {
		defer GinkgoRecover()
		defer close(mgrDone)
		err := mgr.Start(ctx)
		if err != nil {
			// A visit that did not end within the grace period still runs: show where it waits.
			dumpManagerGoroutines()
		}
		Expect(err).To(Succeed())
	}()
}

// shutdownGrace is how long the suite's manager waits for its visits to end when stopped.
const shutdownGrace = 90 * time.Second

func stopManager() {
	if stopMgr == nil {
		return
	}
	stopMgr()
	select {
	case <-mgrDone:
	case <-time.After(shutdownGrace + 10*time.Second):
		// A visit that ignores its context keeps the manager from stopping, as it would keep a
		// real operator from handing over its lease: show where it waits.
		dumpManagerGoroutines()
		Fail(fmt.Sprintf("the manager did not stop within %s of its context's end (goroutines above)", shutdownGrace+10*time.Second))
	}
}

// dumpManagerGoroutines writes the stacks of the goroutines in the operator's code and in its
// manager to the test's standard error.
func dumpManagerGoroutines() {
	var dump strings.Builder
	_ = pprof.Lookup("goroutine").WriteTo(&dump, 2)
	for _, g := range strings.Split(dump.String(), "\n\n") {
		// The manager's own (its runnables, their sources and workers) too: what keeps it
		// from stopping may wait in controller-runtime on behalf of our code.
		if strings.Contains(g, "beeburst/beeburst/controllers") || strings.Contains(g, "beeburst/beeburst/internal") ||
			strings.Contains(g, "sigs.k8s.io/controller-runtime/pkg/") {
			// Straight to the log: a failure outside a spec may not show the spec's output.
			fmt.Fprintln(os.Stderr, g)
		}
	}
}

// writeKubeconfig lets tests run kubectl against the envtest API server.
func writeKubeconfig(c *rest.Config) string {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: c.Host, CertificateAuthorityData: c.CAData}
	kc.AuthInfos["envtest"] = &clientcmdapi.AuthInfo{ClientCertificateData: c.CertData, ClientKeyData: c.KeyData, Token: c.BearerToken}
	kc.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "envtest"}
	kc.CurrentContext = "envtest"
	f := filepath.Join(os.TempDir(), fmt.Sprintf("beeburst-envtest-%d.kubeconfig", os.Getpid()))
	Expect(clientcmd.WriteToFile(*kc, f)).To(Succeed())
	DeferCleanup(os.Remove, f)
	return f
}

// makeNode creates a Ready node, as a kubelet would register it.
// nodeIPs counts the nodes made, for their addresses.
var nodeIPs int

func makeNode(ctx context.Context, name string, labels map[string]string) {
	n := &corev1.Node{}
	n.Name = name
	n.Labels = map[string]string{corev1.LabelHostname: name} // as every kubelet sets it
	for k, v := range labels {
		n.Labels[k] = v
	}
	Expect(k8s.Create(ctx, n)).To(Succeed())
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
		Reason: "KubeletReady", LastHeartbeatTime: nowMeta(), LastTransitionTime: nowMeta()}}
	// An InternalIP, as every kubelet reports: the network probe's client is sent to it.
	nodeIPs++
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("10.213.%d.%d", nodeIPs/250, nodeIPs%250+1)}}
	Expect(k8s.Status().Update(ctx, n)).To(Succeed())
}
