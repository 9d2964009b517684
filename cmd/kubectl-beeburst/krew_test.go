package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// The krew manifest keeps krew's rules (sigs.k8s.io/krew's index validation, which the Go
// module proxy does not serve): apiVersion and kind, the name of the file, a one-line short
// description, a v-prefixed semantic version, and per platform an os/arch selector, a URI,
// a sha256 of 64 hex digits, the binary and the files to install. Our own: URIs name the
// version and the platform, and the binary is the one `make build` makes.
func TestKrewManifest(t *testing.T) {
	var m struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Spec struct {
			Version          string `json:"version"`
			Homepage         string `json:"homepage"`
			ShortDescription string `json:"shortDescription"`
			Description      string `json:"description"`
			Caveats          string `json:"caveats"`
			Platforms        []struct {
				Selector struct {
					MatchLabels map[string]string `json:"matchLabels"`
				} `json:"selector"`
				URI    string `json:"uri"`
				Sha256 string `json:"sha256"`
				Bin    string `json:"bin"`
				Files  []struct {
					From string `json:"from"`
					To   string `json:"to"`
				} `json:"files"`
			} `json:"platforms"`
		} `json:"spec"`
	}
	if err := yaml.UnmarshalStrict([]byte(mustRead(t, "../../plugins/beeburst.yaml")), &m); err != nil {
		t.Fatal(err)
	}
	s := m.Spec
	if m.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || m.Kind != "Plugin" || m.Metadata.Name != "beeburst" {
		t.Errorf("header %s %s %s", m.APIVersion, m.Kind, m.Metadata.Name)
	}
	if !regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`).MatchString(s.Version) {
		t.Errorf("version %q", s.Version)
	}
	if s.ShortDescription == "" || strings.ContainsAny(s.ShortDescription, "\r\n") || len(s.ShortDescription) > 50 {
		t.Errorf("shortDescription %q: one line, a few words", s.ShortDescription)
	}
	if s.Description == "" || s.Homepage == "" {
		t.Error("description and homepage are required")
	}
	if len(s.Platforms) == 0 {
		t.Fatal("no platforms")
	}
	seen := map[string]bool{}
	for _, p := range s.Platforms {
		os, arch := p.Selector.MatchLabels["os"], p.Selector.MatchLabels["arch"]
		if len(p.Selector.MatchLabels) != 2 || os == "" || arch == "" || seen[os+"/"+arch] {
			t.Errorf("selector %v: os and arch, once each", p.Selector.MatchLabels)
		}
		seen[os+"/"+arch] = true
		if !strings.HasSuffix(p.URI, fmt.Sprintf("/%s/kubectl-beeburst_%s_%s_%s.tar.gz", s.Version, s.Version, os, arch)) {
			t.Errorf("%s/%s: uri %q does not name the version and the platform", os, arch, p.URI)
		}
		if !regexp.MustCompile(`^[a-f0-9]{64}$`).MatchString(p.Sha256) {
			t.Errorf("%s/%s: sha256 %q", os, arch, p.Sha256)
		}
		if p.Bin != "kubectl-beeburst" || len(p.Files) == 0 || p.Files[0].From != p.Bin {
			t.Errorf("%s/%s: bin %q files %+v", os, arch, p.Bin, p.Files)
		}
		for _, f := range p.Files {
			if f.From == "" || f.To == "" {
				t.Errorf("%s/%s: file %+v", os, arch, f)
			}
		}
	}
}
