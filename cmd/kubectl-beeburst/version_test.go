package main

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// version prints what -ldflags "-X main.version=..." stamped (make build, krew-release.sh, the
// release workflow; hack/check-release.sh checks a built archive).
func TestVersion(t *testing.T) {
	defer func(v string) { version = v }(version)
	version = "v1.2.3-rc.1"

	code, out, errOut := runCLI(t, "", "version")
	if code != 0 || out != "kubectl-beeburst v1.2.3-rc.1 ("+runtime.Version()+", "+runtime.GOOS+"/"+runtime.GOARCH+")\n" {
		t.Errorf("version: exit %d, %q %q", code, out, errOut)
	}
	var info versionInfo
	code, out, _ = runCLI(t, "", "version", "-o", "json")
	if err := json.Unmarshal([]byte(out), &info); code != 0 || err != nil || info.Version != "v1.2.3-rc.1" || info.Platform != runtime.GOOS+"/"+runtime.GOARCH {
		t.Errorf("version -o json: exit %d, %v, %q", code, err, out)
	}
	info = versionInfo{}
	code, out, _ = runCLI(t, "", "version", "-o", "yaml")
	if err := yaml.UnmarshalStrict([]byte(out), &info); code != 0 || err != nil || info.Version != "v1.2.3-rc.1" || info.GoVersion != runtime.Version() {
		t.Errorf("version -o yaml: exit %d, %v, %q", code, err, out)
	}
	if code, _, errOut := runCLI(t, "", "version", "-o", "wide"); code != exitInvalid || !strings.Contains(errOut, "--output must be json or yaml") {
		t.Errorf("version -o wide: exit %d, %q", code, errOut)
	}
	if code, out, _ := runCLI(t, "", "--version"); code != 0 || !strings.Contains(out, "v1.2.3-rc.1") {
		t.Errorf("--version: exit %d, %q", code, out)
	}
	// -v is kubectl's log level, never the version.
	if code, _, _ := runCLI(t, "", "-v"); code == 0 {
		t.Error("-v is accepted as --version")
	}
}

// completion writes a completion script per shell, for the commands and their flags; the
// hidden __complete command answers the shells (and kubectl's plugin completion).
func TestCompletion(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		code, out, errOut := runCLI(t, "", "completion", shell)
		if code != 0 || !strings.Contains(out, "kubectl-beeburst") {
			t.Errorf("completion %s: exit %d, %d bytes, %q", shell, code, len(out), errOut)
		}
	}
	code, out, _ := runCLI(t, "", "__complete", "")
	for _, cmd := range []string{"estimate", "limits", "version", "completion"} {
		if code != 0 || !strings.Contains(out, cmd) {
			t.Errorf("__complete '' does not offer %s: exit %d\n%s", cmd, code, out)
		}
	}
	code, out, _ = runCLI(t, "", "__complete", "version", "-o", "")
	if code != 0 || !strings.Contains(out, "json") || !strings.Contains(out, "yaml") {
		t.Errorf("__complete version -o: exit %d\n%s", code, out)
	}
	// Cobra offers a required flag first: --filename.
	code, out, _ = runCLI(t, "", "__complete", "estimate", "--")
	if code != 0 || !strings.Contains(out, "--filename") {
		t.Errorf("__complete estimate --: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "", "__complete", "estimate", "-f", "x.yaml", "--ta")
	if code != 0 || !strings.Contains(out, "--target") {
		t.Errorf("__complete estimate -f x.yaml --ta: exit %d\n%s", code, out)
	}
}
