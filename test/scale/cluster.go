package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/beeburst/beeburst/test/scale/kubelet"
)

// operatorNamespace is the manager's own namespace (--cache-namespace): node locks, the
// per-node figure cache.
const operatorNamespace = "beeburst-system"

// managerAccount is the service account the manager runs as, as the Helm chart deploys it.
// Its token, not a user's certificate, makes the API server treat the manager's requests as
// a deployed manager's: RBAC through ServiceAccount subjects, and API Priority and Fairness
// through the bootstrap flow schema "service-accounts" (priority level workload-low), where a
// plain user would fall to global-default.
const managerAccount = "beeburst-manager"

// managerUser is the username of managerAccount's token: the audit log counts its requests
// apart from the harness's.
const managerUser = "system:serviceaccount:" + operatorNamespace + ":" + managerAccount

// auditPolicy records every request of the manager (metadata only: verb, resource, user) and
// nothing of anyone else's.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted"]
rules:
- level: Metadata
  users: ["` + managerUser + `"]
- level: None
`

// cluster is one size's control plane: envtest's kube-apiserver and etcd, the manager's
// identity with the operator's own RBAC (config/rbac), and the harness's clients.
type cluster struct {
	env        *envtest.Environment
	dir        string
	auditLog   string
	kubeconfig string // the manager's
	cfg        *rest.Config
	cs         kubernetes.Interface
}

func startCluster(ctx context.Context, root, kubeBin, dir string) (*cluster, error) {
	c := &cluster{dir: dir, auditLog: filepath.Join(dir, "audit.log")}
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return nil, err
	}
	c.env = &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(root, "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: kubeBin,
	}
	args := c.env.ControlPlane.GetAPIServer().Configure()
	args.Set("audit-policy-file", policy)
	args.Set("audit-log-path", c.auditLog)
	args.Set("audit-log-format", "json")
	args.Set("audit-log-maxsize", "0")
	cfg, err := c.env.Start()
	if err != nil {
		return nil, fmt.Errorf("starting kube-apiserver and etcd (KUBEBUILDER_ASSETS=%s; make envtest builds them): %w", kubeBin, err)
	}
	// The harness's clients create nodes, burst buffers and the kubelet's status reports:
	// no client-side throttling, so that the harness is never what holds the manager up.
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = -1, 0
	c.cfg = cfg
	if c.cs, err = kubernetes.NewForConfig(cfg); err != nil {
		return c, err
	}
	if err := c.createNamespace(ctx, operatorNamespace); err != nil {
		return c, err
	}
	if err := c.writeManagerKubeconfig(ctx); err != nil {
		return c, err
	}
	return c, c.applyRBAC(ctx, filepath.Join(root, "config", "rbac", "role.yaml"))
}

// profile saves the API server's CPU profile over seconds to file (its /debug/pprof, as
// the harness's admin user).
func (c *cluster) profile(ctx context.Context, seconds int, file string) error {
	b, err := c.cs.CoreV1().RESTClient().Get().AbsPath("/debug/pprof/profile").
		Param("seconds", strconv.Itoa(seconds)).Timeout(time.Duration(seconds+30) * time.Second).DoRaw(ctx)
	if err != nil {
		return err
	}
	return os.WriteFile(file, b, 0o644)
}

// writeManagerKubeconfig creates the manager's service account and writes a kubeconfig with
// a token of it (TokenRequest, as the kubelet mounts one into a deployed manager's pod).
func (c *cluster) writeManagerKubeconfig(ctx context.Context) error {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: managerAccount, Namespace: operatorNamespace}}
	if _, err := c.cs.CoreV1().ServiceAccounts(operatorNamespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		return err
	}
	// Longer than any run: the manager's client does not refresh a token read from a kubeconfig.
	tr, err := c.cs.CoreV1().ServiceAccounts(operatorNamespace).CreateToken(ctx, managerAccount, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(24 * 3600))},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("a token for the manager's service account: %w", err)
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: c.cfg.Host, CertificateAuthorityData: c.cfg.CAData}
	kc.AuthInfos[managerAccount] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	kc.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: managerAccount}
	kc.CurrentContext = "envtest"
	c.kubeconfig = filepath.Join(c.dir, "manager.kubeconfig")
	return clientcmd.WriteToFile(*kc, c.kubeconfig)
}

func (c *cluster) stop() error {
	if c.env == nil {
		return nil
	}
	return c.env.Stop()
}

func (c *cluster) createNamespace(ctx context.Context, name string) error {
	_, err := c.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// applyRBAC creates the operator's ClusterRole and Role (controller-gen's output) and binds
// them to the manager's service account, so that it runs with the permissions a deployment gives it.
func (c *cluster) applyRBAC(ctx context.Context, roleFile string) error {
	raw, err := os.ReadFile(roleFile)
	if err != nil {
		return err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: managerAccount, Namespace: operatorNamespace}}
	for {
		var probe struct {
			Kind string `json:"kind"`
		}
		var doc map[string]any
		if err := dec.Decode(&doc); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		b, _ := json.Marshal(doc)
		_ = json.Unmarshal(b, &probe)
		switch probe.Kind {
		case "ClusterRole":
			var r rbacv1.ClusterRole
			if err := json.Unmarshal(b, &r); err != nil {
				return err
			}
			if _, err := c.cs.RbacV1().ClusterRoles().Create(ctx, &r, metav1.CreateOptions{}); err != nil {
				return err
			}
			_, err = c.cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: r.Name}, Subjects: subject,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: r.Name},
			}, metav1.CreateOptions{})
			if err != nil {
				return err
			}
		case "Role":
			var r rbacv1.Role
			if err := json.Unmarshal(b, &r); err != nil {
				return err
			}
			if err := c.createNamespace(ctx, r.Namespace); err != nil {
				return err
			}
			if _, err := c.cs.RbacV1().Roles(r.Namespace).Create(ctx, &r, metav1.CreateOptions{}); err != nil {
				return err
			}
			_, err = c.cs.RbacV1().RoleBindings(r.Namespace).Create(ctx, &rbacv1.RoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: r.Name, Namespace: r.Namespace}, Subjects: subject,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: r.Name},
			}, metav1.CreateOptions{})
			if err != nil {
				return err
			}
		}
	}
}

// registerNodes creates the model's nodes, a few at a time, as their kubelets would.
func (c *cluster) registerNodes(ctx context.Context, nodes []kubelet.Node) error {
	var wg sync.WaitGroup
	errs := make(chan error, len(nodes))
	sem := make(chan struct{}, 16)
	for _, n := range nodes {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := kubelet.Register(ctx, c.cs, n); err != nil {
				errs <- fmt.Errorf("node %s: %w", n.Name, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}
