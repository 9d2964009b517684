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

// reportMessage is the first line of an agent report's message, or of the raw text when it
// is not one.
func reportMessage(msg string) string {
	return shorten.FirstLine(bench.ReportMessage(msg), messageMax)
}
