package dockerfiles

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/beeburst/beeburst/internal/engine/beegfs"
)

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", path))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// makeVar is a Makefile's default of NAME (NAME ?= value).
func makeVar(t *testing.T, makefile, name string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + name + ` \?= (.*)$`).FindStringSubmatch(makefile)
	if m == nil {
		t.Fatalf("the Makefile has no %s ?=", name)
	}
	return strings.TrimSpace(m[1])
}

// argDefault is a Dockerfile's default of ARG NAME=value.
func argDefault(t *testing.T, dockerfile, name string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^ARG ` + name + `=(\S*)$`).FindStringSubmatch(dockerfile)
	if m == nil {
		t.Fatalf("no ARG %s=... in the Dockerfile", name)
	}
	return m[1]
}

// The tools image the engine runs by default is the one the Makefile builds and pushes.
func TestBeeGFSToolsImageIsTheEnginesDefault(t *testing.T) {
	mk := read(t, "Makefile")
	df := read(t, "build/beegfs-tools.Dockerfile")
	if v := makeVar(t, mk, "BEEGFS_VERSION"); v != beegfs.Version {
		t.Errorf("Makefile BEEGFS_VERSION %s, the engine's beegfs.Version %s", v, beegfs.Version)
	}
	if v := argDefault(t, df, "BEEGFS_VERSION"); v != beegfs.Version {
		t.Errorf("build/beegfs-tools.Dockerfile BEEGFS_VERSION %s, the engine's beegfs.Version %s", v, beegfs.Version)
	}
	img := strings.NewReplacer("$(REGISTRY)", makeVar(t, mk, "REGISTRY"), "$(BEEGFS_VERSION)", beegfs.Version).
		Replace(makeVar(t, mk, "BEEGFS_TOOLS_IMG"))
	if img != beegfs.DefaultClientImage {
		t.Errorf("make docker-build-beegfs-tools builds %s, the engine runs %s", img, beegfs.DefaultClientImage)
	}
	if !strings.Contains(df, "beegfs-tools=${BEEGFS_VERSION}") {
		t.Error("the tools image does not install ThinkParQ's beegfs-tools package of BEEGFS_VERSION")
	}
	if !strings.Contains(df, "cannot be reached") {
		t.Error("the tools image's Dockerfile does not say that ThinkParQ's repository cannot be reached from our machines")
	}
}

// shellCommands lists the external commands a shell script runs: the first word of every
// simple command, without builtins, keywords, the script's own functions and variables.
func shellCommands(script string) []string {
	builtins := map[string]bool{}
	for _, w := range strings.Fields("set if then else elif fi for in do done while until case esac return exit trap " +
		"local export echo printf read shift wait true false test [ [[ ]] ] : unset break continue eval exec command type cd pwd kill") {
		builtins[w] = true
	}
	script = strings.ReplaceAll(script, "\\\n", " ")
	script = regexp.MustCompile(`'[^']*'`).ReplaceAllString(script, "''")
	// A double-quoted string is one word; only the commands substituted in it run.
	script = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`).ReplaceAllStringFunc(script, func(q string) string {
		subs := regexp.MustCompile(`\$\(([^()]*)\)`).FindAllStringSubmatch(q, -1)
		out := "x"
		for _, m := range subs {
			out += " ; " + m[1] + " ;"
		}
		return out
	})
	script = regexp.MustCompile(`\$\{[^}]*\}`).ReplaceAllString(script, "x")
	script = regexp.MustCompile(`(?m)(^|\s)#.*$`).ReplaceAllString(script, "")
	for _, m := range regexp.MustCompile(`(?m)^\s*([A-Za-z_][A-Za-z0-9_]*)\(\)`).FindAllStringSubmatch(script, -1) {
		builtins[m[1]] = true
	}
	sep := regexp.MustCompile(`\$\(|&&|\|\||[;|&{}()!\n]|\b(then|do|else|elif|if|while|until)\b`)
	seen := map[string]bool{}
	var out []string
	for _, part := range sep.Split(script, -1) {
		wrapped := false // the command is timeout's argument
		for _, w := range strings.Fields(part) {
			if strings.Contains(w, "=") || strings.HasPrefix(w, ">") || strings.HasPrefix(w, "<") || regexp.MustCompile(`^[0-9]*[<>]`).MatchString(w) {
				continue // assignments and redirections before the command
			}
			if wrapped && (strings.HasPrefix(w, "-") || regexp.MustCompile(`^[0-9.]+[smhd]?$`).MatchString(w)) {
				continue // timeout's options and duration
			}
			if !builtins[w] && !strings.HasPrefix(w, "$") && regexp.MustCompile(`^[a-z][a-z0-9_.-]*$`).MatchString(w) && !seen[w] {
				seen[w] = true
				out = append(out, w)
			}
			if w == "timeout" && !wrapped {
				wrapped = true
				continue
			}
			break
		}
	}
	slices.Sort(out)
	return out
}

func TestShellCommands(t *testing.T) {
	got := shellCommands("set -eu\nf() {\n  x=$(date +%s); y=1 timeout 5 umount -c \"$M\" 2>/dev/null || true\n}\n" +
		"if ! grep -qs ' a ' /proc/mounts; then\n  { echo \"not (yet) $(hostname)\"; dmesg | tail -n 5; } | tee /dev/x >&2 # a comment\nfi\n$B run\nf\n")
	if want := []string{"date", "dmesg", "grep", "hostname", "tail", "tee", "timeout", "umount"}; !slices.Equal(got, want) {
		t.Errorf("shellCommands: %v, want %v", got, want)
	}
}

// The tools image has every command the engine's scripts run (their golden files), and its
// build checks each of them.
func TestBeeGFSToolsImageHasWhatTheScriptsRun(t *testing.T) {
	m := regexp.MustCompile(`for c in ([^;]+); do`).FindStringSubmatch(read(t, "build/beegfs-tools.Dockerfile"))
	if m == nil {
		t.Fatal("build/beegfs-tools.Dockerfile does not check its commands (for c in ...; do command -v)")
	}
	checked := strings.Fields(m[1])
	scripts, err := filepath.Glob("../../internal/engine/beegfs/testdata/*.sh")
	if err != nil || len(scripts) < 4 {
		t.Fatalf("the engine's golden scripts: %v %v", scripts, err)
	}
	for _, s := range scripts {
		b, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range append(shellCommands(string(b)), "sh") {
			if !slices.Contains(checked, c) {
				t.Errorf("%s runs %s, which build/beegfs-tools.Dockerfile does not check for", filepath.Base(s), c)
			}
		}
	}
}

// The agent image has the tools the agent's tasks run, at the path the node-task pods use.
func TestAgentImageHasTheAgentsTools(t *testing.T) {
	df := read(t, "build/agent.Dockerfile")
	for _, tool := range []string{"fio", "iperf3"} {
		if !regexp.MustCompile(`apt-get install [^\n]*\b` + tool + `\b`).MatchString(df) {
			t.Errorf("build/agent.Dockerfile does not install %s", tool)
		}
	}
	if !strings.Contains(df, "ln -s /usr/local/bin/agent /agent") {
		t.Error("build/agent.Dockerfile does not put the agent at /agent (internal/nodetask runs /agent)")
	}
	if !strings.Contains(read(t, "internal/nodetask/pod.go"), `Command:         []string{"/agent"}`) {
		t.Error("internal/nodetask no longer runs /agent: keep the agent image's path in step")
	}
}

// Every Dockerfile builds offline with BuildKit's built-in frontend (a `# syntax=` line makes
// BuildKit fetch one from a registry), takes its bases as build-args (hack/docker.sh passes
// local ones), stamps VERSION, and the Go builder is the go.mod's Go.
func TestDockerfilesBuildOffline(t *testing.T) {
	goVersion := regexp.MustCompile(`(?m)^go ([0-9]+\.[0-9]+)`).FindStringSubmatch(read(t, "go.mod"))[1]
	dockerSh := read(t, "hack/docker.sh")
	for path, args := range map[string][]string{
		"Dockerfile":                    {"GOLANG_IMAGE", "BASE_IMAGE"},
		"build/agent.Dockerfile":        {"GOLANG_IMAGE", "DEBIAN_IMAGE"},
		"build/beegfs-tools.Dockerfile": {"DEBIAN_IMAGE"},
	} {
		df := read(t, path)
		if regexp.MustCompile(`(?m)^#\s*syntax=`).MatchString(df) {
			t.Errorf("%s has a # syntax= line: BuildKit would fetch that frontend from a registry", path)
		}
		for _, a := range args {
			argDefault(t, df, a)
			if !regexp.MustCompile(`(?m)^FROM (--platform=\S+ )?\$\{` + a + `\}`).MatchString(df) {
				t.Errorf("%s: no stage FROM ${%s}", path, a)
			}
			if !strings.Contains(dockerSh, "--build-arg "+a+"=") {
				t.Errorf("hack/docker.sh does not pass %s", a)
			}
		}
		if g := regexp.MustCompile(`(?m)^ARG GOLANG_IMAGE=golang:([0-9.]+)`).FindStringSubmatch(df); g != nil && g[1] != goVersion {
			t.Errorf("%s builds with golang:%s, go.mod says go %s", path, g[1], goVersion)
		}
		if path != "build/beegfs-tools.Dockerfile" && !strings.Contains(df, "-X main.version=${VERSION}") {
			t.Errorf("%s does not stamp the binary with VERSION", path)
		}
	}
}
