// Package speccheck checks a BurstBuffer's spec in the operator, for what the API server's
// validation cannot cover:
//
//   - the operator's own settings, which CEL cannot see: spec.storage.path must be below a
//     root the cluster administrator allows (Roots);
//   - values the API server never checked: an object stored through an older CRD, before a
//     rule existed, can carry anything (Spec re-checks every field whose value reaches a host
//     path, a configuration file, a command line or a duration, with the CRD's rules);
//   - label selectors, whose syntax the CRD schema does not describe.
//
// Pure functions; the controller turns what they return into a condition. The rules mirror
// the CRD's (api/v1alpha1 markers); a test reads the generated CRD and fails when they drift.
package speccheck

import (
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
)

// Patterns shared with the CRD's CEL rules (the same strings appear in the markers).
const (
	// HostPathPattern is an absolute path written plainly: no empty segment, no trailing '/',
	// letters, digits and . _ - + @ only (nothing a shell, a configuration file or a human
	// reading a node could misread).
	HostPathPattern = `^(/[A-Za-z0-9._+@-]+)+$`
	// DotSegmentPattern finds a "." or ".." segment.
	DotSegmentPattern = `(^|/)[.][.]?(/|$)`
	// DurationPattern is Go's duration syntax without a sign, which CEL's duration() and
	// time.ParseDuration both read.
	DurationPattern = `^(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|ms|s|m|h))+)$`
	// ImagePattern is a container image reference: [registry[:port]/]repository[:tag][@digest].
	ImagePattern = `^([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?([.][A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*(:[0-9]+)?/)?[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*(/[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*)*(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[a-f0-9]{64})?$`
	// InterfacePattern is a Linux interface name's characters and length (IFNAMSIZ - 1);
	// InterfaceForbidden are those that Linux or the rendered list cannot take.
	InterfacePattern   = `^[[:graph:]]{1,15}$`
	InterfaceForbidden = `[/:,#]`
)

var (
	hostPathRE     = regexp.MustCompile(HostPathPattern)
	dotSegmentRE   = regexp.MustCompile(DotSegmentPattern)
	durationRE     = regexp.MustCompile(DurationPattern)
	imageRE        = regexp.MustCompile(ImagePattern)
	interfaceRE    = regexp.MustCompile(InterfacePattern)
	interfaceBadRE = regexp.MustCompile(InterfaceForbidden)
	controlRE      = regexp.MustCompile(`[[:cntrl:]]`)
	regionRE       = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)
)

// SystemDirs are never a storage path, nor a parent of one, whatever the administrator
// allows: the operator's node tasks create and remove directories below spec.storage.path as
// root. /run also holds the BeeGFS client mounts (/run/beeburst).
var SystemDirs = []string{
	"/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32", "/proc",
	"/root", "/run", "/sbin", "/sys", "/usr", "/var/run", "/var/log",
	"/var/lib/kubelet", "/var/lib/containerd", "/var/lib/docker", "/var/lib/etcd",
}

// SystemParents are never a storage path themselves (their children may be).
var SystemParents = []string{"/var", "/var/lib"}

// IsSystemPath says whether p is a system directory or below one, or one of SystemParents.
func IsSystemPath(p string) bool {
	return slices.Contains(SystemParents, p) || slices.ContainsFunc(SystemDirs, func(d string) bool { return below(p, d) })
}

// below says whether p is dir or below it, by whole segments (/mntx is not below /mnt).
func below(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// HostPath checks an absolute node or container path written plainly: HostPathPattern, no
// "." or ".." segment.
func HostPath(p string) error {
	switch {
	case !hostPathRE.MatchString(p):
		return fmt.Errorf("must be an absolute path of letters, digits and . _ - + @ with no empty segment and no trailing '/'")
	case dotSegmentRE.MatchString(p):
		return fmt.Errorf("must not contain '.' or '..' segments")
	}
	return nil
}

// DefaultRoots are the storage roots allowed when the administrator says nothing: where
// node-local drives are mounted by convention (/mnt: kind, GKE local SSDs, AKS; /scratch,
// /local, /nvme: HPC sites; /var/lib/beeburst: a directory made for the purpose).
const DefaultRoots = "/mnt,/scratch,/local,/nvme,/var/lib/beeburst"

// Roots are the directories below which spec.storage.path may lie.
type Roots []string

// ParseRoots reads a comma-separated list of roots (the manager's --allowed-storage-roots).
// Each must be a plain absolute path and not a system directory; an empty list allows nothing.
func ParseRoots(s string) (Roots, error) {
	roots := Roots{}
	for _, r := range strings.Split(s, ",") {
		r = strings.TrimSpace(r)
		if r == "" {
			continue
		}
		if err := HostPath(r); err != nil {
			return nil, fmt.Errorf("allowed storage root %q: %v", r, err)
		}
		if IsSystemPath(r) {
			return nil, fmt.Errorf("allowed storage root %q is a system directory, which is never allowed", r)
		}
		roots = append(roots, r)
	}
	return roots, nil
}

// Allow says whether p is one of the roots or below one.
func (rs Roots) Allow(p string) bool {
	return slices.ContainsFunc(rs, func(r string) bool { return below(path.Clean(p), r) })
}

// String is the roots as the flag takes them.
func (rs Roots) String() string { return strings.Join(rs, ",") }

// Duration bounds of the spec's Duration fields, as the CRD's rules have them.
type durationField struct {
	path     *field.Path
	value    v1alpha1.Duration
	min, max time.Duration
}

func durationFields(bb *v1alpha1.BurstBuffer) []durationField {
	spec := field.NewPath("spec")
	return []durationField{
		{spec.Child("validation", "timeBudget"), bb.Spec.Validation.TimeBudget, time.Second, 24 * time.Hour},
		{spec.Child("validation", "reuseComponentResultsFor"), bb.Spec.Validation.ReuseComponentResultsFor, 0, v1alpha1.MaxReuseComponentResultsFor},
		{spec.Child("teardown", "ttl"), bb.Spec.Teardown.TTL, time.Second, 8760 * time.Hour},
	}
}

// Spec checks the fields of a stored spec that the operator turns into host paths,
// configuration files, command lines, label selectors and clocks. The API server refuses all
// of this for objects written since the CRD has these rules; what remains is an object
// stored before, which must fail on its own instead of misleading the operator.
func Spec(bb *v1alpha1.BurstBuffer) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	for _, d := range durationFields(bb) {
		if d.value == "" {
			continue
		}
		v, err := d.value.Parse()
		switch {
		case err != nil || !durationRE.MatchString(string(d.value)):
			errs = append(errs, field.Invalid(d.path, string(d.value), "must be a duration such as 90s, 10m or 1h30m"))
		case v < d.min || v > d.max:
			errs = append(errs, field.Invalid(d.path, string(d.value), fmt.Sprintf("must be from %s to %s", d.min, d.max)))
		}
	}

	p := spec.Child("storage", "path")
	if err := HostPath(bb.Spec.Storage.Path); err != nil {
		errs = append(errs, field.Invalid(p, bb.Spec.Storage.Path, err.Error()))
	} else if IsSystemPath(bb.Spec.Storage.Path) {
		errs = append(errs, field.Invalid(p, bb.Spec.Storage.Path, "must not be a system directory or below one"))
	}
	if mp := bb.Spec.Workload.MountPath; mp != "" {
		if err := HostPath(mp); err != nil {
			errs = append(errs, field.Invalid(spec.Child("workload", "mountPath"), mp, err.Error()))
		}
	}

	errs = append(errs, selector(spec.Child("nodes", "selector"), bb.Spec.Nodes.Selector)...)
	errs = append(errs, selector(spec.Child("workload", "selector"), bb.Spec.Workload.Selector)...)

	for i, s := range bb.Spec.StageIn {
		errs = append(errs, stage(spec.Child("stageIn").Index(i), s)...)
	}
	for i, s := range bb.Spec.StageOut {
		errs = append(errs, stage(spec.Child("stageOut").Index(i), s)...)
	}

	if g := bb.Spec.BeeGFS; g != nil {
		if ls := g.LicenseSecret; ls != "" {
			for _, msg := range validation.IsDNS1123Subdomain(ls) {
				errs = append(errs, field.Invalid(spec.Child("beegfs", "licenseSecret"), ls, msg))
			}
		}
		for i, name := range g.Interfaces {
			if err := Interface(name); err != nil {
				errs = append(errs, field.Invalid(spec.Child("beegfs", "interfaces").Index(i), name, err.Error()))
			}
		}
		if im := g.Images; im != nil {
			ip := spec.Child("beegfs", "images")
			for _, f := range []struct {
				name  string
				value v1alpha1.ImageReference
			}{{"management", im.Management}, {"metadata", im.Metadata}, {"storage", im.Storage}, {"client", im.Client}} {
				if f.value != "" && (len(f.value) > 512 || !imageRE.MatchString(string(f.value))) {
					errs = append(errs, field.Invalid(ip.Child(f.name), string(f.value), "must be an image reference such as ghcr.io/thinkparq/beegfs-meta:8.3.1"))
				}
			}
		}
	}
	return errs
}

// Interface checks a Linux network interface name as the kernel's dev_valid_name does
// (1-15 bytes, no '/', ':' or whitespace, not "." or ".."), printable ASCII only, and without
// ',' or '#', which would split or end BeeGFS's connInterfacesList.
func Interface(name string) error {
	if !interfaceRE.MatchString(name) || interfaceBadRE.MatchString(name) || name == "." || name == ".." {
		return fmt.Errorf("must be a Linux interface name: 1-15 printable characters without whitespace, '/', ':', ',' or '#', and not '.' or '..'")
	}
	return nil
}

func selector(p *field.Path, sel *metav1.LabelSelector) field.ErrorList {
	if sel == nil {
		return nil
	}
	if _, err := metav1.LabelSelectorAsSelector(sel); err != nil {
		b, _ := json.Marshal(sel)
		return field.ErrorList{field.Invalid(p, string(b), err.Error())}
	}
	return nil
}

func stage(p *field.Path, s v1alpha1.StageSpec) field.ErrorList {
	var errs field.ErrorList
	relative := func(fp *field.Path, v string) {
		switch {
		case strings.HasPrefix(v, "/") || strings.Contains(v, ".."):
			errs = append(errs, field.Invalid(fp, v, "must be relative and must not contain '..'"))
		case controlRE.MatchString(v):
			errs = append(errs, field.Invalid(fp, v, "must not contain control characters"))
		}
	}
	relative(p.Child("path"), s.Path)
	if s.S3 == nil {
		c := s.PersistentVolumeClaim
		for _, msg := range validation.IsDNS1123Subdomain(c.ClaimName) {
			errs = append(errs, field.Invalid(p.Child("persistentVolumeClaim", "claimName"), c.ClaimName, msg))
		}
		relative(p.Child("persistentVolumeClaim", "path"), c.Path)
		return errs
	}
	s3 := p.Child("s3")
	if controlRE.MatchString(s.S3.URL) || strings.ContainsAny(s.S3.URL, "?#") {
		errs = append(errs, field.Invalid(s3.Child("url"), s.S3.URL, "must be s3://bucket/prefix without control characters, '?' or '#'"))
	}
	if strings.ContainsAny(s.S3.Endpoint, "@ \t\r\n") || controlRE.MatchString(s.S3.Endpoint) {
		errs = append(errs, field.Invalid(s3.Child("endpoint"), s.S3.Endpoint, "must be http(s)://host[:port] without user information, whitespace or control characters"))
	}
	if r := s.S3.Region; r != "" && !regionRE.MatchString(r) {
		errs = append(errs, field.Invalid(s3.Child("region"), r, "must be letters, digits and - _ . such as eu-central-1"))
	}
	if cs := s.S3.CredentialsSecret; cs != "" {
		for _, msg := range validation.IsDNS1123Subdomain(cs) {
			errs = append(errs, field.Invalid(s3.Child("credentialsSecret"), cs, msg))
		}
	}
	return errs
}
