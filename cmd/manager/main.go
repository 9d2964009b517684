// Command manager runs the beeburst operator.
package main

import (
	"flag"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/controllers"
	"github.com/beeburst/beeburst/internal/apitrace"
	"github.com/beeburst/beeburst/internal/bbmetrics"
	"github.com/beeburst/beeburst/internal/claim"
	"github.com/beeburst/beeburst/internal/speccheck"
)

func main() {
	var (
		metricsAddr, probeAddr, pprofAddr, agentImage, cacheNamespace, storageRoots, storageClass string
		leaderElect                                                                               bool
		concurrent                                                                                int
		slowVisit                                                                                 time.Duration
	)
	flag.StringVar(&metricsAddr, "metrics-bind-address", ":8080", "address of the metrics endpoint (0 disables it)")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "address of the health probes")
	flag.StringVar(&pprofAddr, "pprof-bind-address", "0", "address of the Go profiler's endpoint (net/http/pprof); 0, the default, disables it")
	flag.IntVar(&concurrent, "max-concurrent-reconciles", 0, "how many burst buffers are visited at once (0: the operator's default, 4)")
	flag.DurationVar(&slowVisit, "slow-visit-log", 0, "log each visit to a burst buffer that takes longer than this (e.g. 250ms), with the API requests it made, grouped and timed; 0, the default, logs none")
	flag.BoolVar(&leaderElect, "leader-elect", false, "elect a leader, for more than one replica")
	flag.StringVar(&agentImage, "agent-image", envOr("BEEBURST_AGENT_IMAGE", "beeburst/agent:dev"), "image of the agent that runs node tasks, probes and benchmarks")
	flag.StringVar(&cacheNamespace, "cache-namespace", envOr("POD_NAMESPACE", "beeburst-system"), "namespace of the per-node ConfigMaps that keep stage-2 figures for reuse (the operator's own)")
	flag.StringVar(&storageClass, "storage-class", claim.DefaultStorageClass, "storage class of the claims and volumes through which pods use burst buffers (the chart creates it)")
	flag.StringVar(&storageRoots, "allowed-storage-roots", speccheck.DefaultRoots,
		"comma-separated directories below which a BurstBuffer's spec.storage.path may lie; the operator's node tasks create and remove directories there as root. System directories are refused whatever this says")
	opts := zap.Options{}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	log := ctrl.Log.WithName("setup")
	if soft := setGoMemoryLimit(); soft > 0 {
		log.Info("Go memory limit set from the container's", "bytes", soft, "share", memoryLimitShare)
	}
	roots, err := speccheck.ParseRoots(storageRoots)
	if err != nil {
		log.Error(err, "invalid --allowed-storage-roots")
		os.Exit(2)
	}

	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(v1alpha1.AddToScheme(scheme))

	cfg := ctrl.GetConfigOrDie()
	if slowVisit > 0 {
		// Every request a visit sends is timed on its way through (internal/apitrace).
		cfg.Wrap(apitrace.Transport)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: metricsAddr},
		HealthProbeBindAddress: probeAddr,
		PprofBindAddress:       pprofAddr,
		LeaderElection:         leaderElect,
		LeaderElectionID:       "beeburst.io",
		// The lease is in the operator's namespace (a Role there allows it and the events
		// leader election records). A manager that stops hands the lease back at once, so a
		// restarted or upgraded one takes over in seconds instead of waiting for the old
		// lease to run out (15 s): safe, because nothing runs after Start returns.
		LeaderElectionNamespace:       cacheNamespace,
		LeaderElectionReleaseOnCancel: true,
		// Reconciles in flight get this long to finish before the process exits; they are
		// short (children are applied, never waited for), and the pod's grace period is 30 s.
		GracefulShutdownTimeout: ptr.To(20 * time.Second),
		Cache:                   controllers.CacheOptions(cacheNamespace),
	})
	if err != nil {
		log.Error(err, "unable to create manager")
		os.Exit(1)
	}
	if err := (&controllers.BurstBufferReconciler{
		Client:                  mgr.GetClient(),
		Recorder:                mgr.GetEventRecorder("beeburst"),
		AgentImage:              agentImage,
		CacheNamespace:          cacheNamespace,
		StorageRoots:            roots,
		StorageClass:            storageClass,
		MaxConcurrentReconciles: concurrent,
		SlowVisit:               slowVisit,
	}).SetupWithManager(mgr); err != nil {
		log.Error(err, "unable to set up controller", "controller", "BurstBuffer")
		os.Exit(1)
	}
	if err := (&controllers.WorkloadReconciler{
		Client:   mgr.GetClient(),
		Recorder: mgr.GetEventRecorder("beeburst"),
	}).SetupWithManager(mgr); err != nil {
		log.Error(err, "unable to set up controller", "controller", "Workload")
		os.Exit(1)
	}
	// Every figure of every BurstBuffer's status, read from the cache at scrape time.
	ctrlmetrics.Registry.MustRegister(bbmetrics.NewCollector(mgr.GetCache(), bbmetrics.Options{Elected: mgr.Elected(), Log: ctrl.Log.WithName("metrics")}))
	utilruntime.Must(mgr.AddHealthzCheck("healthz", healthz.Ping))
	utilruntime.Must(mgr.AddReadyzCheck("readyz", healthz.Ping))
	log.Info("starting manager", "version", version, "agentImage", agentImage, "namespace", cacheNamespace, "leaderElection", leaderElect, "allowedStorageRoots", roots.String())
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		log.Error(err, "manager stopped")
		os.Exit(1)
	}
	log.Info("manager stopped cleanly", "leaderLeaseReleased", leaderElect)
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
