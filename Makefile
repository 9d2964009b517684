# beeburst - the Makefile is the interface. Tools are pinned and installed into bin/;
# Kubernetes binaries (envtest, testbed) are built from Go module sources into a cache that
# survives clones on the same machine ($(CACHE_DIR)), and rebuilt on a fresh one.

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

# One version for a release: the images' tags, the chart's version (without the v) and
# appVersion, and what the manager, the agent and the kubectl plugin report (-X main.version).
VERSION ?= dev
# Images, in the kubebuilder convention. REGISTRY is where the release pushes them; the
# testbed's own images are REGISTRY=beeburst (hack/cluster.sh, hack/docker.sh).
REGISTRY ?= ghcr.io/beeburst
IMG ?= $(REGISTRY)/manager:$(VERSION)
AGENT_IMG ?= $(REGISTRY)/agent:$(VERSION)
# The BeeGFS tools image is tagged with the BeeGFS release it carries (internal/engine/beegfs
# DefaultClientImage names it; hack/dockerfiles checks the two agree).
BEEGFS_VERSION ?= 8.3.1
BEEGFS_TOOLS_IMG ?= $(REGISTRY)/beegfs-tools:$(BEEGFS_VERSION)
PLATFORMS ?= linux/amd64,linux/arm64
CONTAINER_TOOL ?= docker
# Extra arguments of every image build, e.g. base images and a proxy (hack/docker.sh).
DOCKER_BUILD_ARGS ?=
LDFLAGS := -s -w -X main.version=$(VERSION)

LOCALBIN ?= $(CURDIR)/bin
CACHE_DIR ?= $(HOME)/.cache/beeburst
K8S_VERSION ?= v1.36.3
ETCD_VERSION ?= v3.6.8
K8S_BIN ?= $(CACHE_DIR)/k8s-$(K8S_VERSION)

CONTROLLER_TOOLS_VERSION ?= v0.21.0
HELM_VERSION ?= v3.19.0
GINKGO_VERSION ?= v2.28.1
ACTIONLINT_VERSION ?= v1.7.12
REGISTRY_VERSION ?= v3.1.2

CONTROLLER_GEN ?= $(LOCALBIN)/controller-gen-$(CONTROLLER_TOOLS_VERSION)
HELM ?= $(LOCALBIN)/helm-$(HELM_VERSION)
ACTIONLINT ?= $(LOCALBIN)/actionlint-$(ACTIONLINT_VERSION)
OCI_REGISTRY ?= $(LOCALBIN)/registry-$(REGISTRY_VERSION)

export GOFLAGS := -buildvcs=false

.PHONY: all
all: build

##@ General
.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  %-18s %s\n", $$1, $$2 } /^##@/ { printf "\n%s\n", substr($$0, 5) } ' $(MAKEFILE_LIST)

##@ Development
.PHONY: manifests
manifests: controller-gen ## Generate the CRD and RBAC into config/ and the chart.
	$(CONTROLLER_GEN) rbac:roleName=beeburst-manager crd paths="./api/..." paths="./controllers/..." output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac
	@# controller-gen keeps the Go comments' line breaks; kubectl explain would break sentences there.
	go run ./hack/crddoc config/crd/bases/*.yaml
	hack/sync-chart.sh

.PHONY: generate
generate: controller-gen ## Generate deepcopy code.
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./api/..."

.PHONY: fmt
fmt: ## go fmt.
	go fmt ./...

.PHONY: vet
vet: ## go vet.
	go vet ./...

.PHONY: verify
verify: manifests generate fmt lint-workflows ## Regenerate everything, lint the workflows, and fail if the tree changed.
	@if [ -n "$$(git status --porcelain -- api config charts controllers internal cmd test hack)" ]; then \
	  echo "verify: generated files are out of date; run 'make manifests generate fmt' and commit:"; \
	  git status --porcelain -- api config charts controllers internal cmd test hack; git --no-pager diff --stat; exit 1; fi
	@echo "verify: generated files are up to date"

.PHONY: lint-workflows
lint-workflows: actionlint ## Lint the GitHub workflows (.github/workflows) with actionlint.
	$(ACTIONLINT) -color=false

##@ Test
.PHONY: test
# Fuzzing is not part of `make test`: a fuzzer that finds a new input during CI fails a change
# that did not cause it. Every fuzz target's seeds and committed failing inputs
# (testdata/fuzz/) run in test-unit on every change; `make test-fuzz` searches for new ones.
test: vet test-unit test-envtest test-testbed test-e2e ## The test command: vet, unit tests (with every fuzz corpus), envtest, the testbed's proofs, the e2e suite.

.PHONY: bench
bench: helm ## Not part of make test: on the testbed, apply -> Ready of 1, 5 and 20 burst buffers at once with each stage's share, stage 1's latency, the manager's memory and reconcile latency (test/bench).
	HELM=$(HELM) hack/cluster.sh bench

# BENCH_SCALE_ARGS: flags of test/scale, e.g. -sizes 20x100 for a short run, -keep to keep the
# audit and manager logs.
BENCH_SCALE_ARGS ?=

.PHONY: bench-scale
bench-scale: envtest ## Not part of make test: the control plane at scale - envtest's API server, the manager, a simulated kubelet, 50 and 200 burst buffers on 250 and 1,000 nodes (test/scale; report in docs/bench).
	CGO_ENABLED=0 go build -o $(LOCALBIN)/manager ./cmd/manager
	go run ./test/scale -kube-bin "$(K8S_BIN)" -manager "$(LOCALBIN)/manager" $(BENCH_SCALE_ARGS)

.PHONY: test-unit
# The unit tests and the envtest suite run with the race detector: the controllers write from
# several goroutines per visit (internal/parallel) beside concurrent visits, and a data race
# there would end the manager. RACE= runs them without it.
RACE ?= -race

test-unit: host-tools ## Unit tests of the pure packages and commands, with real fio and iperf3 runs.
	BEEBURST_REQUIRE_TOOLS=1 go test $(RACE) ./api/... ./internal/... ./cmd/... ./hack/... ./test/scale/... -count=1

# Fuzzing: every fuzz target for FUZZTIME each, one `go test -fuzz` per target (see the script).
FUZZTIME ?= 4s
FUZZMINIMIZETIME ?= 1s

.PHONY: test-fuzz
test-fuzz: ## Run every fuzz target for FUZZTIME (4s) each; FUZZ_KUBERNETES=1 adds those that link Kubernetes.
	FUZZTIME=$(FUZZTIME) FUZZMINIMIZETIME=$(FUZZMINIMIZETIME) hack/test-fuzz.sh

.PHONY: host-tools
host-tools: ## Install fio and iperf3 from Debian packages if missing (the agent's tests run them).
	hack/host-tools.sh

.PHONY: test-envtest
test-envtest: envtest ## Ginkgo + envtest suite against a real kube-apiserver and etcd.
	KUBEBUILDER_ASSETS="$(K8S_BIN)" go test $(RACE) ./controllers/... -count=1 -timeout 20m

.PHONY: envtest
envtest: $(K8S_BIN)/kube-apiserver $(K8S_BIN)/etcd ## Build kube-apiserver and etcd for envtest from Go module sources (cached).
$(K8S_BIN)/kube-apiserver $(K8S_BIN)/etcd:
	K8S_VERSION=$(K8S_VERSION) ETCD_VERSION=$(ETCD_VERSION) hack/build-k8s.sh $(K8S_BIN) kube-apiserver etcd

.PHONY: test-testbed
test-testbed: ## Prove the testbed: failed start + down, up, iperf3/fio within 10% of the shaping, down, host as it was.
	CACHE_DIR=$(CACHE_DIR) K8S_VERSION=$(K8S_VERSION) hack/testbed/prove.sh --full

.PHONY: testbed-up
testbed-up: ## Bring up the local multi-node testbed (root, no Docker); TESTBED_ARGS=... for its hardware.
	CACHE_DIR=$(CACHE_DIR) K8S_VERSION=$(K8S_VERSION) hack/testbed/up.sh $(TESTBED_ARGS)

.PHONY: testbed-down
testbed-down: ## Tear the testbed down (idempotent).
	hack/testbed/down.sh

.PHONY: test-e2e
test-e2e: helm ## The e2e suite on $$KUBECONFIG's cluster, else on kind (Docker) or the testbed it brings up and tears down.
	HELM=$(HELM) hack/cluster.sh e2e

.PHONY: test-e2e-beegfs
test-e2e-beegfs: helm ## The beegfs specs against a real BeeGFS on QEMU testbed nodes (BEEBURST_BEEGFS_MODULE, BEEBURST_BEEGFS_IMAGES; docs/beegfs.md).
	HELM=$(HELM) hack/cluster.sh e2e-beegfs

##@ Build
.PHONY: build
build: ## Build the manager, agent and kubectl plugin into bin/ (stamped with VERSION).
	CGO_ENABLED=0 go build -ldflags "$(LDFLAGS)" -o $(LOCALBIN)/manager ./cmd/manager
	CGO_ENABLED=0 go build -ldflags "$(LDFLAGS)" -o $(LOCALBIN)/agent ./cmd/agent
	CGO_ENABLED=0 go build -ldflags "$(LDFLAGS)" -o $(LOCALBIN)/kubectl-beeburst ./cmd/kubectl-beeburst

.PHONY: run
run: manifests generate ## Run the manager against the current kubeconfig.
	go run ./cmd/manager

##@ Deployment
.PHONY: demo
demo: helm ## The main job: a cluster (testbed or kind), the operator, the sample burst buffer, its limits.
	HELM=$(HELM) hack/cluster.sh demo

.PHONY: images
images: ## Build the operator and agent images as tars in bin/images for the testbed (no Docker needed).
	hack/cluster.sh images

.PHONY: deploy
deploy: helm ## Install the chart into the current cluster (hack/cluster.sh up first).
	HELM=$(HELM) hack/cluster.sh deploy

.PHONY: cluster-down
cluster-down: ## Tear down the cluster `make demo` brought up.
	hack/cluster.sh down

.PHONY: install
install: manifests ## Install the CRDs into the current kubeconfig's cluster.
	kubectl apply --server-side -f config/crd/bases

.PHONY: uninstall
uninstall: ## Remove the CRDs.
	kubectl delete --ignore-not-found -f config/crd/bases

.PHONY: helm-lint
helm-lint: helm manifests ## Lint the chart, check it agrees with config/, and that VERSION flows into a release's artifacts.
	$(HELM) lint charts/beeburst
	hack/check-chart.sh "$(HELM)"
	HELM=$(HELM) hack/check-release.sh

##@ Images (Dockerfiles; BuildKit)
.PHONY: docker-build
docker-build: docker-build-manager docker-build-agent docker-build-beegfs-tools ## Build IMG, AGENT_IMG and BEEGFS_TOOLS_IMG for this machine's platform.

.PHONY: docker-build-manager
docker-build-manager: ## Build the operator image IMG (Dockerfile).
	DOCKER_BUILDKIT=1 $(CONTAINER_TOOL) build $(DOCKER_BUILD_ARGS) --build-arg VERSION=$(VERSION) -t $(IMG) -f Dockerfile .

.PHONY: docker-build-agent
docker-build-agent: ## Build the agent image AGENT_IMG (build/agent.Dockerfile).
	DOCKER_BUILDKIT=1 $(CONTAINER_TOOL) build $(DOCKER_BUILD_ARGS) --build-arg VERSION=$(VERSION) -t $(AGENT_IMG) -f build/agent.Dockerfile .

.PHONY: docker-build-beegfs-tools
docker-build-beegfs-tools: ## Build the BeeGFS tools image BEEGFS_TOOLS_IMG from ThinkParQ's packages (needs their repository).
	DOCKER_BUILDKIT=1 $(CONTAINER_TOOL) build $(DOCKER_BUILD_ARGS) --build-arg BEEGFS_VERSION=$(BEEGFS_VERSION) -t $(BEEGFS_TOOLS_IMG) -f build/beegfs-tools.Dockerfile build

.PHONY: docker-push
docker-push: ## Push IMG, AGENT_IMG and BEEGFS_TOOLS_IMG (built by docker-build).
	$(CONTAINER_TOOL) push $(IMG)
	$(CONTAINER_TOOL) push $(AGENT_IMG)
	$(CONTAINER_TOOL) push $(BEEGFS_TOOLS_IMG)

.PHONY: docker-buildx
docker-buildx: ## Build and push the three images for PLATFORMS (linux/amd64,linux/arm64) with docker buildx.
	$(CONTAINER_TOOL) buildx build --push --platform $(PLATFORMS) $(DOCKER_BUILD_ARGS) --build-arg VERSION=$(VERSION) -t $(IMG) -f Dockerfile .
	$(CONTAINER_TOOL) buildx build --push --platform $(PLATFORMS) $(DOCKER_BUILD_ARGS) --build-arg VERSION=$(VERSION) -t $(AGENT_IMG) -f build/agent.Dockerfile .
	$(CONTAINER_TOOL) buildx build --push --platform $(PLATFORMS) $(DOCKER_BUILD_ARGS) --build-arg BEEGFS_VERSION=$(BEEGFS_VERSION) -t $(BEEGFS_TOOLS_IMG) -f build/beegfs-tools.Dockerfile build

##@ Release
# The chart's version is VERSION without its v (SemVer); a VERSION that is not a release tag
# (dev) gives 0.0.0-VERSION.
CHART_VERSION ?= $(if $(filter v%,$(VERSION)),$(patsubst v%,%,$(VERSION)),0.0.0-$(VERSION))
CHART_REGISTRY ?= oci://$(REGISTRY)/charts
RELEASE_DIR ?= $(LOCALBIN)/release

.PHONY: helm-package
helm-package: helm ## Package the chart into RELEASE_DIR as beeburst-CHART_VERSION.tgz, appVersion VERSION.
	mkdir -p $(RELEASE_DIR)
	$(HELM) package charts/beeburst --version $(CHART_VERSION) --app-version $(VERSION) -d $(RELEASE_DIR)

.PHONY: helm-push
helm-push: helm ## Push the packaged chart to CHART_REGISTRY as an OCI artifact (logs in with REGISTRY_USER/REGISTRY_PASSWORD if set).
	@if [ -n "$${REGISTRY_PASSWORD:-}" ]; then \
	  echo "$$REGISTRY_PASSWORD" | $(HELM) registry login "$(firstword $(subst /, ,$(patsubst oci://%,%,$(CHART_REGISTRY))))" -u "$$REGISTRY_USER" --password-stdin; fi
	$(HELM) push $(RELEASE_DIR)/beeburst-$(CHART_VERSION).tgz $(CHART_REGISTRY)

.PHONY: test-chart-oci
test-chart-oci: helm registry ## Push the packaged chart to a local OCI registry, read and render it back from there (not part of make test).
	HELM=$(HELM) OCI_REGISTRY=$(OCI_REGISTRY) hack/test-chart-oci.sh

.PHONY: release-artifacts
release-artifacts: helm-package ## Everything a release attaches, in RELEASE_DIR: chart, CRDs, krew archives and manifest (VERSION=vX.Y.Z).
	cat config/crd/bases/*.yaml > $(RELEASE_DIR)/beeburst-crds.yaml
	@# The krew manifest is filled in a copy (without the template's comments): plugins/beeburst.yaml stays the template.
	grep -v '^#' plugins/beeburst.yaml > $(RELEASE_DIR)/krew-beeburst.yaml
	OUT=$(RELEASE_DIR) MANIFEST=$(RELEASE_DIR)/krew-beeburst.yaml hack/krew-release.sh $(VERSION)
	cd $(RELEASE_DIR) && sha256sum beeburst-* kubectl-beeburst_* krew-beeburst.yaml > SHA256SUMS

##@ Tools
.PHONY: controller-gen
controller-gen: $(CONTROLLER_GEN)
$(CONTROLLER_GEN):
	mkdir -p $(LOCALBIN) && GOBIN=$(LOCALBIN) go install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_TOOLS_VERSION)
	mv $(LOCALBIN)/controller-gen $(CONTROLLER_GEN)

.PHONY: helm
helm: $(HELM)
$(HELM):
	mkdir -p $(LOCALBIN) && GOBIN=$(LOCALBIN) go install helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)
	mv $(LOCALBIN)/helm $(HELM)

.PHONY: actionlint
actionlint: $(ACTIONLINT)
$(ACTIONLINT):
	mkdir -p $(LOCALBIN) && GOBIN=$(LOCALBIN) go install github.com/rhysd/actionlint/cmd/actionlint@$(ACTIONLINT_VERSION)
	mv $(LOCALBIN)/actionlint $(ACTIONLINT)

.PHONY: registry
registry: $(OCI_REGISTRY)
$(OCI_REGISTRY):
	mkdir -p $(LOCALBIN) && GOBIN=$(LOCALBIN) go install github.com/distribution/distribution/v3/cmd/registry@$(REGISTRY_VERSION)
	mv $(LOCALBIN)/registry $(OCI_REGISTRY)

.PHONY: clean
clean: ## Remove bin/ (the Kubernetes cache in $(CACHE_DIR) stays).
	rm -rf $(LOCALBIN)
