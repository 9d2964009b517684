package main

// version is the release this manager was built as; `make build` and the image builds set it
// with -ldflags "-X main.version=..." (the Makefile's VERSION). It is logged at start.
var version = "dev"
