package main

// version is the release this agent was built as; `make build` and the image builds set it
// with -ldflags "-X main.version=..." (the Makefile's VERSION). `agent --version` prints it.
var version = "dev"
