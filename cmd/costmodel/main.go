// Command costmodel prints the monthly AWS bill of the reference team
// (docs/cost.md): counts per event times prices, before and after the
// fixed-cost changes. Run it with `go run ./cmd/costmodel`; the table in
// docs/cost.md is its output (TestCostDocIsTheModel keeps them equal).
//
// The counts per event come from docs/performance.md where it measured
// them; the others are assumptions, each named in its line. The schedules
// and the memory sizes of "after" are read from the deploy catalogue, so
// the model follows it.
package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
)

func main() {
	if err := write(os.Stdout, reference, buildLines(reference)); err != nil {
		fmt.Fprintln(os.Stderr, "costmodel:", err)
		os.Exit(1)
	}
}

// Team is the workload, per day.
type Team struct {
	Agents, People                        int
	Messages, Wakes, Asks, Deliveries     float64
	AgentsPerRoom                         float64 // agents that see a message in their room (poll markers)
	ToolCallsPerRun                       float64
	ColdStartsPerFunctionDay              float64
	RunSeconds                            float64 // an agent run: mostly waiting for the model
	RocketChatRoundTripMs                 float64
	LogBytesPerInvocation, LogBytesPerRun float64
	LogMonthsKeptWithoutRetention         float64 // how old the stack is when "forever" is costed
}

// reference is the reference team of docs/cost.md.
var reference = Team{
	Agents: 10, People: 30,
	Messages: 2000, Wakes: 300, Asks: 100, Deliveries: 20,
	AgentsPerRoom:                 2,
	ToolCallsPerRun:               2,
	ColdStartsPerFunctionDay:      10,
	RunSeconds:                    8,
	RocketChatRoundTripMs:         60,
	LogBytesPerInvocation:         700,  // START, END, REPORT and one slog line
	LogBytesPerRun:                6000, // an agent run's slog lines
	LogMonthsKeptWithoutRetention: 12,
}

// Prices in USD, us-east-1, on-demand, without the free tier (as of
// December 2026; aws.amazon.com/<service>/pricing).
const (
	lambdaPerRequest      = 0.20 / 1e6
	lambdaPerGBSecond     = 0.0000133334 // arm64
	dynamoPerWRU          = 0.625 / 1e6
	dynamoPerRRU          = 0.125 / 1e6
	secretPerMonth        = 0.40
	secretPerCall         = 0.05 / 1e4
	s3PerPUTorLIST        = 0.005 / 1e3
	s3PerGBMonth          = 0.023
	sfnPerTransition      = 0.025 / 1e3 // Standard (document delivery)
	sfnExpressPerRequest  = 1.00 / 1e6  // Express (ask_agent), duration negligible
	logsPerGBIngested     = 0.50
	logsPerGBMonthStored  = 0.03
	alarmPerMonth         = 0.10
	dynamoPerGBMonth      = 0.25
	dynamoPITRPerGBMonth  = 0.20
	daysPerMonth          = 30
	bytesPerGB            = 1 << 30
	secondsPerMillisecond = 1e-3
)

// Line is one item of the bill: how many units a month before and after,
// at one price per unit.
type Line struct {
	Service, What string
	Unit          string
	Before, After float64 // units a month
	Price         float64 // USD per unit
}

func (l Line) BeforeUSD() float64 { return l.Before * l.Price }
func (l Line) AfterUSD() float64  { return l.After * l.Price }

// memoryBefore is the functions' memory before the sizes were measured.
var memoryBefore = map[string]int{"agent-worker": 512, "jobs": 256}

func memoryMB(fn string, after bool) int {
	f, ok := deploy.FunctionByName(fn)
	if !ok {
		panic("costmodel: no function " + fn + " in the deploy catalogue")
	}
	if mb, ok := memoryBefore[fn]; ok && !after {
		return mb
	}
	return f.MemoryMB
}

// runsPerDay is how often the catalogue runs job a day.
func runsPerDay(job string) float64 {
	j, ok := deploy.JobByName(job)
	if !ok {
		panic("costmodel: no job " + job + " in the deploy catalogue")
	}
	every, err := deploy.ParseRate(j.Schedule)
	if err != nil {
		panic(err)
	}
	return float64(24*time.Hour) / float64(every)
}

// jobSeconds is a job run's billed duration; the poll asks its agents
// Parallel at a time (before: one after another).
func jobSeconds(job string, t Team, parallel int) float64 {
	switch job {
	case "rocketchat-poll":
		rounds := (t.Agents + parallel - 1) / parallel
		return float64(rounds) * t.RocketChatRoundTripMs * secondsPerMillisecond
	case "task-wakes", "approvals-expire", "task-watchdog":
		return 0.02 // one Query
	case "nextcloud-cleanup":
		return 2
	default: // heartbeat, telegram-poll, rocketchat-health: one or a few round trips
		return 0.1
	}
}

// buildLines is the bill of t.
func buildLines(t Team) []Line {
	m := float64(daysPerMonth)
	gb := func(fn string, after bool) float64 { return float64(memoryMB(fn, after)) / 1024 }

	// Lambda invocations a day.
	webhook := t.Messages                     // every message of the agents' rooms reaches the receiver
	worker := t.Wakes + t.Asks + t.Deliveries // wakes; the answering run of an ask; a delivery's follow-up run
	tools := t.Asks*1 + t.Deliveries*5        // ask guard; convert, upload, share, post, finish
	var jobRuns float64
	for _, j := range deploy.Jobs {
		jobRuns += runsPerDay(j.Name)
	}
	coldStarts := float64(len(deploy.Functions)) * t.ColdStartsPerFunctionDay

	// GB-seconds a day. The asking run waits for the answer, so an ask
	// bills two runs' time.
	workerSeconds := (worker + t.Asks) * t.RunSeconds
	jobGBs := func(after bool) float64 {
		parallel := 1
		if after {
			parallel = 4 // wake.DefaultPollParallel
		}
		var s float64
		for _, j := range deploy.Jobs {
			s += runsPerDay(j.Name) * jobSeconds(j.Name, t, parallel)
		}
		return s * gb("jobs", after)
	}
	gbs := func(after bool) float64 {
		return webhook*0.010*gb("rocketchat-webhook", after) + // ack: filters and one conditional write
			workerSeconds*gb("agent-worker", after) +
			(t.Asks*0.05+t.Deliveries*3.2)*gb("tools", after) + // guard; Collabora conversion and Nextcloud calls
			jobGBs(after) +
			coldStarts*0.1*0.25 // init phase, about 100 ms at 256 MB
	}

	// DynamoDB write request units a day (docs/performance.md).
	wakeWRU := 1.0 + 2 + 2 + 2 + 1 + 2*t.ToolCallsPerRun // claim; lease; receipt + byRoot; claim begin/finish; hourly counter; audit + byRoot per tool call
	askWRU := 2*34.0 + 2 + 2 + 2*2                       // two message rows (table, 3 indexes, ~30 search rows); audit; lease; two receipts
	deliveryWRU := 10.0 + 6*2                            // step markers; audit entries + byRoot
	pollWRU := t.Messages * t.AgentsPerRoom              // room marker moved, per agent that sees the message
	jobRecordsBefore := jobRuns                          // one record per run
	jobRecordsAfter := float64(len(deploy.Jobs))*24 + 2*t.Wakes*0.1
	// After: once an hour per job, plus outcome changes (assumed: one in
	// ten wakes meets a failing run, which is recorded and then its recovery).
	taskWakesRRU := runsPerDay("task-wakes") * 0.5 // one Query of the empty byWake index
	readRRU := t.Wakes*3 + t.Asks*6 + pollWRU*0.5 + taskWakesRRU

	// Secrets: the stack's three plus one per agent token, the tool token
	// and a webhook token; after: the instance secret and the console
	// password. Every cold start reads every secret the config names.
	secretsBefore := float64(3 + t.Agents + 2 + 1) // +1: the Nextcloud app password
	secretsAfter := 2.0

	// CloudWatch Logs, bytes a day.
	logBytes := (webhook+tools+jobRuns)*t.LogBytesPerInvocation + worker*t.LogBytesPerRun
	logGBMonth := logBytes * m / bytesPerGB
	storedBefore := logGBMonth * (t.LogMonthsKeptWithoutRetention + 1) / 2 // growing since the start, averaged over the year
	storedAfter := logGBMonth * float64(deploy.DefaultLogRetentionDays) / daysPerMonth

	alarms := float64(len(deploy.Functions) + len(deploy.StateMachines))
	dataGB := 1.0 // tables (audit, receipts, agent messages for a year) — assumed

	return []Line{
		{"Secrets Manager", "secrets", "secret", secretsBefore, secretsAfter, secretPerMonth},
		{"Secrets Manager", "GetSecretValue at cold starts", "call", coldStarts * secretsBefore * m, coldStarts * secretsAfter * m, secretPerCall},
		{"Lambda", "requests", "request", (webhook + worker + tools + jobRuns) * m, (webhook + worker + tools + jobRuns) * m, lambdaPerRequest},
		{"Lambda", "duration (agent-worker " + mb(memoryMB("agent-worker", false)) + " → " + mb(memoryMB("agent-worker", true)) + ", jobs " +
			mb(memoryMB("jobs", false)) + " → " + mb(memoryMB("jobs", true)) + ", poll 1 → 4 agents at once)", "GB-s", gbs(false) * m, gbs(true) * m, lambdaPerGBSecond},
		{"DynamoDB", "writes of wakes, asks, deliveries, poll markers", "WRU", (t.Wakes*wakeWRU + t.Asks*askWRU + t.Deliveries*deliveryWRU + pollWRU) * m,
			(t.Wakes*wakeWRU + t.Asks*askWRU + t.Deliveries*deliveryWRU + pollWRU) * m, dynamoPerWRU},
		{"DynamoDB", "job-run records (every run → on change or hourly)", "WRU", jobRecordsBefore * m, jobRecordsAfter * m, dynamoPerWRU},
		{"DynamoDB", "reads", "RRU", readRRU * m, readRRU * m, dynamoPerRRU},
		{"DynamoDB", "storage + point-in-time recovery", "GB-month", dataGB, dataGB, dynamoPerGBMonth + dynamoPITRPerGBMonth},
		{"S3", "PUT and LIST (heartbeat LIST every 5 minutes, tool writes)", "request", (runsPerDay("heartbeat") + t.Wakes*0.3 + t.Deliveries) * m,
			(runsPerDay("heartbeat") + t.Wakes*0.3 + t.Deliveries) * m, s3PerPUTorLIST},
		{"S3", "workspace storage", "GB-month", 1, 1, s3PerGBMonth},
		{"Step Functions", "delivery transitions (Standard, 8 each)", "transition", t.Deliveries * 8 * m, t.Deliveries * 8 * m, sfnPerTransition},
		{"Step Functions", "ask_agent executions (Express)", "request", t.Asks * m, t.Asks * m, sfnExpressPerRequest},
		{"CloudWatch", "log ingestion", "GB", logGBMonth, logGBMonth, logsPerGBIngested},
		{"CloudWatch", "log storage (forever, a year old → 30 days)", "GB-month", storedBefore, storedAfter, logsPerGBMonthStored},
		{"CloudWatch", "alarms (one per function and state machine)", "alarm", alarms, alarms, alarmPerMonth},
	}
}

func mb(n int) string { return fmt.Sprintf("%d MB", n) }

// write renders the bill as the Markdown table docs/cost.md shows.
func write(w io.Writer, t Team, lines []Line) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Reference team: %d agents, %d people, %.0f messages, %.0f wakes, %.0f asks and %.0f deliveries a day; %d days a month.\n\n",
		t.Agents, t.People, t.Messages, t.Wakes, t.Asks, t.Deliveries, daysPerMonth)
	b.WriteString("| service | what | units a month before → after | USD per unit | before $ | after $ |\n|---|---|---|---|---|---|\n")
	var before, after float64
	for _, l := range lines {
		units := count(l.Before)
		if l.After != l.Before {
			units += " → " + count(l.After)
		}
		fmt.Fprintf(&b, "| %s | %s | %s %s | %s | %.2f | %.2f |\n", l.Service, l.What, units, l.Unit, price(l.Price), l.BeforeUSD(), l.AfterUSD())
		before += l.BeforeUSD()
		after += l.AfterUSD()
	}
	fmt.Fprintf(&b, "| **total** | | | | **%.2f** | **%.2f** |\n", before, after)
	_, err := io.WriteString(w, b.String())
	return err
}

// count writes n with thousands separators, keeping one decimal below 100.
func count(n float64) string {
	if n < 100 {
		s := fmt.Sprintf("%.1f", n)
		return strings.TrimSuffix(s, ".0")
	}
	s := fmt.Sprintf("%.0f", n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// price writes a unit price without trailing zeros.
func price(p float64) string {
	s := strings.TrimRight(fmt.Sprintf("%.10f", p), "0")
	return strings.TrimSuffix(s, ".")
}
