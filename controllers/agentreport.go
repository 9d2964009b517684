package controllers

import (
	"errors"

	"github.com/beeburst/beeburst/internal/bench"
	"github.com/beeburst/beeburst/internal/shorten"
)

// readReport reads an agent's report from a task pod's termination message with the one
// decoder of the contract (bench.DecodeReport: JSON, a known phase, figures within physical
// bounds). The error is the cause alone: each caller says in its own words whose report it
// could not read.
func readReport(msg string) (bench.Report, error) {
	rep, err := bench.DecodeReport([]byte(msg))
	if err != nil {
		return rep, errors.Unwrap(err)
	}
	return rep, nil
}

// reportMessage is the message of an agent report, or the raw text when it is not one (a
// pod that failed before the agent wrote its report: the kubelet's reason, a log tail).
func reportMessage(msg string) string {
	if rep, err := bench.DecodeReport([]byte(msg)); !bench.Unreadable(err) && rep.Message != "" {
		return shorten.FirstLine(rep.Message, messageMax)
	}
	return shorten.FirstLine(msg, messageMax)
}
