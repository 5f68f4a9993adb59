package main

// MINOR (cmd/switchboard/main.go:92-96): `run-job nope` encodes the zero
// JobRun before returning the ENOTFOUND error, so stdout carries
// {"job":"","startedAt":"0001-01-01T00:00:00Z","durationNs":0,"outcome":"","trigger":""}
// — a run that never happened — next to the error on stderr. Scripts that
// parse stdout see a bogus run. Fix: return the error before encoding when
// Jobs.Run fails without having run a job (e.g. check r.Job == "" or look
// the job up first).
//
// Copy into cmd/switchboard/ to run: go test -run TestRunJobUnknownPrintsNoRun ./cmd/switchboard

import "testing"

func TestRunJobUnknownPrintsNoRun(t *testing.T) {
	localEnv(t)
	out, err := runCLI(t, "run-job", "nope", "--config", exampleConfig)
	if err == nil {
		t.Fatal("want an error")
	}
	if out != "" {
		t.Errorf("printed %q for a job that does not exist", out)
	}
}
