// Package dockerfiles holds the tests that keep the image builds (Dockerfile,
// build/*.Dockerfile, the Makefile's image variables, hack/docker.sh) in step with what the
// operator expects of its images: the BeeGFS tools image carries every command the beegfs
// engine's scripts run and is tagged with the BeeGFS release the engine names; the agent image
// carries the agent's tools at the path the node-task pods run; every Dockerfile builds with
// BuildKit's built-in frontend (no registry needed) and takes its base images as build-args.
package dockerfiles
