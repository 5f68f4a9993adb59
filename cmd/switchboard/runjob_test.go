package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo"
	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/dynamotest"
	"github.com/switchboard-dev/switchboard/shared/adapters/s3blob/s3fake"
	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

const exampleConfig = "../../switchboard.example.yaml"

// localEnv points the CLI's AWS clients at dynalite (fresh tables for this
// test) and an in-process S3, as `make dev` does, and clears everything
// that could point them at a real account. It returns the store over those
// tables for assertions.
func localEnv(t *testing.T) *dynamo.Store {
	t.Helper()
	client := dynamotest.Client(t)
	tables := dynamotest.FreshTables(t, client)
	s3URL, stopS3, err := s3fake.StartFake("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopS3)
	home := t.TempDir()
	env := map[string]string{
		"AWS_ENDPOINT_URL_DYNAMODB":   dynamotest.Endpoint(t),
		"AWS_ENDPOINT_URL_S3":         s3URL,
		"AWS_ENDPOINT_URL":            "",
		deploy.EnvTablePrefix:         tables(deploy.EnvTablePrefix),
		deploy.EnvBucket:              "cli-test",
		deploy.EnvConfig:              "", // devrt.Prepare sets it; t.Setenv restores it
		"AWS_REGION":                  "us-east-1",
		"AWS_ACCESS_KEY_ID":           "test",
		"AWS_SECRET_ACCESS_KEY":       "test",
		"AWS_SESSION_TOKEN":           "",
		"AWS_PROFILE":                 "",
		"AWS_CONFIG_FILE":             filepath.Join(home, "config"),
		"AWS_SHARED_CREDENTIALS_FILE": filepath.Join(home, "credentials"),
		"AWS_EC2_METADATA_DISABLED":   "true",
	}
	for _, tb := range deploy.Tables {
		env[tb.EnvVar] = ""
	}
	for k, v := range env {
		t.Setenv(k, v)
	}
	return dynamo.New(client, tables)
}

// decodeRun strictly decodes the JSON run run-job prints.
func decodeRun(t *testing.T, out string) sb.JobRun {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	var r sb.JobRun
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("output %q is not a JSON run: %v", out, err)
	}
	if dec.More() {
		t.Errorf("more than one JSON value in %q", out)
	}
	return r
}

func TestRunJobHeartbeat(t *testing.T) {
	store := localEnv(t)
	before := time.Now().UTC()
	out, err := runCLI(t, "run-job", "heartbeat", "--config", exampleConfig)
	if err != nil {
		t.Fatalf("run-job heartbeat: %v\n%s", err, out)
	}
	r := decodeRun(t, out)
	if r.Job != "heartbeat" || r.Outcome != "ok" || r.Trigger != "cli" {
		t.Errorf("run = %+v, want heartbeat ok by cli", r)
	}
	if want := fmt.Sprintf("%d tables and bucket cli-test answer", len(deploy.Tables)); r.Detail != want {
		t.Errorf("detail = %q, want %q", r.Detail, want)
	}
	if r.StartedAt.Before(before.Add(-time.Second)) || r.StartedAt.After(time.Now().Add(time.Second)) || r.Duration <= 0 {
		t.Errorf("startedAt %v, duration %v: want now and positive", r.StartedAt, r.Duration)
	}
	// The run is recorded in the jobs table.
	runs, err := store.LastRuns(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].Job != "heartbeat" || runs[0].Outcome != "ok" || !runs[0].StartedAt.Equal(r.StartedAt) {
		t.Errorf("recorded runs = %+v, want the heartbeat run", runs)
	}
}

func TestRunJobUnknown(t *testing.T) {
	localEnv(t)
	_, err := runCLI(t, "run-job", "nope", "--config", exampleConfig)
	if err == nil || isUsage(err) {
		t.Fatalf("err = %v, want a run-time error", err)
	}
	if sb.ErrorCode(err) != sb.ENOTFOUND {
		t.Errorf("code = %q, want %q", sb.ErrorCode(err), sb.ENOTFOUND)
	}
	// Every job of the catalogue is listed, sorted.
	var names []string
	for _, j := range deploy.Jobs {
		names = append(names, j.Name)
	}
	slices.Sort(names)
	want := `no job "nope"; jobs are: ` + strings.Join(names, ", ")
	if got := sb.ErrorMessage(err); got != want {
		t.Errorf("message = %q, want %q", got, want)
	}
}

func TestRunJobRocketChatHealthWithoutRocketChat(t *testing.T) {
	localEnv(t)
	out, err := runCLI(t, "run-job", "rocketchat-health", "--config", exampleConfig)
	if err != nil {
		t.Fatal(err)
	}
	if r := decodeRun(t, out); r.Outcome != "ok" || r.Detail != "no Rocket.Chat configured; nothing to check" {
		t.Errorf("run = %+v", r)
	}
}

func TestInvokeJobsHeartbeat(t *testing.T) {
	localEnv(t)
	out, err := runCLI(t, "invoke", "--fn", "jobs", "--event", "../../events/jobs/heartbeat.json", "--config", exampleConfig)
	if err != nil {
		t.Fatalf("invoke jobs: %v\n%s", err, out)
	}
	if r := decodeRun(t, out); r.Job != "heartbeat" || r.Outcome != "ok" || r.Trigger != "schedule" {
		t.Errorf("run = %+v, want heartbeat ok by schedule", r)
	}
}
