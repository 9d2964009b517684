package beegfs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/nodetask"
)

// Keys of the auth Secret.
const (
	// KeyConnAuth is the shared secret of BeeMsg connection authentication: every service,
	// the client and the CLI read the same file (doc.beegfs.io, "Authentication": connAuthFile
	// for services and clients, --auth-file for mgmtd and the CLI).
	KeyConnAuth = "conn.auth"
	// KeyTLSCert and KeyTLSKey are mgmtd's gRPC identity (--tls-cert-file, --tls-key-file,
	// beegfs-rust mgmtd/src/config.rs). The certificate is self-signed and is also the CA the
	// CLI verifies mgmtd with (beegfs --tls-cert-file).
	KeyTLSCert = "tls.crt"
	KeyTLSKey  = "tls.key"
)

// SecretName is the auth Secret of bb.
func SecretName(bb *v1alpha1.BurstBuffer) string {
	return nodetask.TaskName(bb, bb.Name+"-beegfs-auth")
}

// CertValidity is how long mgmtd's certificate is valid. A burst buffer lives for one job;
// a year leaves room for long jobs without an expiry in the middle of one.
const CertValidity = 365 * 24 * time.Hour

// NewSecret generates the connection-authentication secret and mgmtd's TLS material. rand is
// crypto/rand.Reader in the operator. The certificate names mgmtdHost (an IP address or a host
// name, whatever the services and the CLI use to reach mgmtd) plus localhost.
func NewSecret(bb *v1alpha1.BurstBuffer, rand io.Reader, now time.Time, mgmtdHost string) (*corev1.Secret, error) {
	// 48 random bytes, base64: printable (the official images pass the secret through an
	// environment variable; we mount it, but a printable secret works both ways).
	raw := make([]byte, 48)
	if _, err := io.ReadFull(rand, raw); err != nil {
		return nil, fmt.Errorf("generating the conn auth secret: %w", err)
	}
	certPEM, keyPEM, err := selfSignedCert(rand, now, bb.Namespace+"."+bb.Name+" beegfs mgmtd", mgmtdHost)
	if err != nil {
		return nil, err
	}
	sec := &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{
			Name: SecretName(bb), Namespace: nodetask.Namespace(bb),
			Labels: serviceLabels(bb, "auth"),
		},
		Type:      corev1.SecretTypeOpaque,
		Immutable: ptr.To(true),
		Data: map[string][]byte{
			KeyConnAuth: []byte(base64.StdEncoding.EncodeToString(raw)),
			KeyTLSCert:  certPEM,
			KeyTLSKey:   keyPEM,
		},
	}
	nodetask.Owned(bb, &sec.ObjectMeta)
	return sec, nil
}

// LicenseCopyName is the Secret the management service mounts its licence from: the user's
// spec.beegfs.licenseSecret itself when the services run beside it, else a copy of its
// licence in the task namespace (a pod mounts Secrets of its own namespace only).
func LicenseCopyName(bb *v1alpha1.BurstBuffer) string {
	if bb.Spec.BeeGFS == nil || bb.Spec.BeeGFS.LicenseSecret == "" {
		return ""
	}
	if nodetask.Namespace(bb) == bb.Namespace {
		return bb.Spec.BeeGFS.LicenseSecret
	}
	return nodetask.TaskName(bb, bb.Name+"-beegfs-license")
}

// LicenseCopy is the copy of the licence certificate for the task namespace (LicenseCopyName).
func LicenseCopy(bb *v1alpha1.BurstBuffer, license []byte) *corev1.Secret {
	sec := &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{
			Name: LicenseCopyName(bb), Namespace: nodetask.Namespace(bb), Labels: serviceLabels(bb, "license"),
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{KeyLicense: license},
	}
	nodetask.Owned(bb, &sec.ObjectMeta)
	return sec
}

func selfSignedCert(rand io.Reader, now time.Time, cn, host string) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand)
	if err != nil {
		return nil, nil, fmt.Errorf("generating mgmtd's TLS key: %w", err)
	}
	serial, err := randSerial(rand)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn, Organization: []string{"beeburst"}},
		NotBefore:    now.Add(-5 * time.Minute), // node clocks drift
		NotAfter:     now.Add(CertValidity),
		// Self-signed and a CA at once: the CLI's --tls-cert-file is the pool it verifies
		// the server with, so this certificate must be able to sign itself.
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	if ip := net.ParseIP(host); ip != nil {
		tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
	} else if host != "" {
		tmpl.DNSNames = append(tmpl.DNSNames, host)
	}
	der, err := x509.CreateCertificate(rand, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("signing mgmtd's TLS certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), nil
}

func randSerial(rand io.Reader) (*big.Int, error) {
	b := make([]byte, 16)
	if _, err := io.ReadFull(rand, b); err != nil {
		return nil, err
	}
	return new(big.Int).SetBytes(b), nil
}

// serviceLabels are the labels of the engine's children: the standard ones of every child
// (nodetask.Labels). The operator's pod cache selects pods by beeburst.io/burst-buffer, so
// the long-running pods carry it too; the workload controller tells them from workload pods
// by app.kubernetes.io/managed-by, and the controller's "running tasks" wait before teardown
// must skip them by their restart policy (Always), as only this engine can stop them in order.
func serviceLabels(bb *v1alpha1.BurstBuffer, component string) map[string]string {
	return nodetask.Labels(bb, component)
}
