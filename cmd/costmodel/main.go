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
	if err := write(os.Stdout, reference); err != nil {
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
	sqsFIFOPerRequest     = 0.50 / 1e6 // FIFO queue, per 64 KB request
	dynamoPerGBMonth      = 0.25
	dynamoPITRPerGBMonth  = 0.20
	daysPerMonth          = 30
	bytesPerGB            = 1 << 30
	secondsPerMillisecond = 1e-3
)

// Changes are the fixed-cost changes; the zero value is the stack before
// them.
type Changes struct {
	GroupedSecrets     bool // one JSON instance secret and the console password
	MeasuredMemory     bool // agent-worker 512 → 256 MB, jobs 256 → 128 MB
	ParallelPoll       bool // the poll asks 4 agents at once
	JobRecordsOnChange bool // a job-run record on change or hourly, not every run
	LogRetention       bool // 30 days instead of forever
	FewerAlarms        bool // errors alarms only where no caller sees the failure
	TaskWakesSweep     bool // task-wakes every 10 minutes, not every minute: wakes go to the wake queue
	// WakeQueue is the SQS FIFO queue that lets one agent's runs take
	// turns without waiting on its lease. It is not a fixed-cost change
	// but a price paid for that: it is in the stack now (all) and not in
	// the savings table.
	WakeQueue bool
}

// all is every change: the stack now.
var all = Changes{true, true, true, true, true, true, true, true}

// changeNames names each change for the savings table, in Changes order.
var changeNames = []struct {
	name string
	set  func(*Changes)
}{
	{"secrets grouped into the instance secret", func(c *Changes) { c.GroupedSecrets = true }},
	{"memory sizes by measurement", func(c *Changes) { c.MeasuredMemory = true }},
	{"poll asks 4 agents at once", func(c *Changes) { c.ParallelPoll = true }},
	{"job-run records on change or hourly", func(c *Changes) { c.JobRecordsOnChange = true }},
	{"log retention 30 days", func(c *Changes) { c.LogRetention = true }},
	{"alarms only where no caller sees the failure", func(c *Changes) { c.FewerAlarms = true }},
	{"task-wakes a 10-minute sweep (wakes go to the wake queue)", func(c *Changes) { c.TaskWakesSweep = true }},
}

// Line is one item of the bill: units a month at a price per unit.
type Line struct {
	Service, What, Unit string
	Units               float64
	Price               float64 // USD per unit
	Detail              string  // what the changes change in it, e.g. the memory sizes
}

// USD is what the line costs a month.
func (l Line) USD() float64 { return l.Units * l.Price }

// Total is what the lines cost a month.
func Total(lines []Line) float64 {
	var sum float64
	for _, l := range lines {
		sum += l.USD()
	}
	return sum
}

// memoryBefore is the functions' memory before the sizes were measured.
var memoryBefore = map[string]int{"agent-worker": 512, "jobs": 256}

func memoryMB(fn string, measured bool) int {
	f, ok := deploy.FunctionByName(fn)
	if !ok {
		panic("costmodel: no function " + fn + " in the deploy catalogue")
	}
	if mb, ok := memoryBefore[fn]; ok && !measured {
		return mb
	}
	return f.MemoryMB
}

// runsOfJob is how often job runs a day with changes c: as the catalogue
// says, except task-wakes before it became a sweep (every minute, when the
// agent-worker's own Taskboard wakes waited for it).
func runsOfJob(job string, c Changes) float64 {
	if job == "task-wakes" && !c.TaskWakesSweep {
		return 24 * 60
	}
	return runsPerDay(job)
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
// parallel at a time.
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

// Bill is the monthly bill of t with changes c.
func Bill(t Team, c Changes) []Line {
	m := float64(daysPerMonth)
	gb := func(fn string) float64 { return float64(memoryMB(fn, c.MeasuredMemory)) / 1024 }

	// Lambda invocations a day.
	webhook := t.Messages                     // every message of the agents' rooms reaches the receiver
	worker := t.Wakes + t.Asks + t.Deliveries // wakes; the answering run of an ask; a delivery's follow-up run
	tools := t.Asks*1 + t.Deliveries*5        // ask guard; convert, upload, share, post, finish
	var jobRuns float64
	for _, j := range deploy.Jobs {
		jobRuns += runsOfJob(j.Name, c)
	}
	coldStarts := float64(len(deploy.Functions)) * t.ColdStartsPerFunctionDay

	// GB-seconds a day. The asking run waits for the answer, so an ask
	// bills two runs' time.
	parallel := 1
	if c.ParallelPoll {
		parallel = 4 // wake.DefaultPollParallel
	}
	var jobSecs float64
	for _, j := range deploy.Jobs {
		jobSecs += runsOfJob(j.Name, c) * jobSeconds(j.Name, t, parallel)
	}
	gbs := webhook*0.010*gb("rocketchat-webhook") + // ack: filters and one conditional write
		(worker+t.Asks)*t.RunSeconds*gb("agent-worker") +
		(t.Asks*0.05+t.Deliveries*3.2)*gb("tools") + // guard; Collabora conversion and Nextcloud calls
		jobSecs*gb("jobs") +
		coldStarts*0.1*0.25 // init phase, about 100 ms at 256 MB

	// DynamoDB write request units a day (docs/performance.md).
	wakeWRU := 1.0 + 2 + 2 + 2 + 1 + 2*t.ToolCallsPerRun // claim; lease; receipt + byRoot; claim begin/finish; hourly counter; audit + byRoot per tool call
	askWRU := 2*32.0 + 2 + 2 + 2*2                       // two message rows (table, 4 indexes, ~27 search rows: 300 B of prose); audit; lease; two receipts
	deliveryWRU := 10.0 + 6*2                            // step markers; audit entries + byRoot
	pollWRU := t.Messages * t.AgentsPerRoom              // room marker moved, per agent that sees the message
	jobRecords := jobRuns                                // one record per run
	if c.JobRecordsOnChange {
		// Once an hour per job, plus outcome changes (assumed: one in ten
		// wakes meets a failing run, recorded, then its recovery).
		jobRecords = float64(len(deploy.Jobs))*24 + 2*t.Wakes*0.1
	}
	taskWakesRRU := runsOfJob("task-wakes", c) * 0.5 // one Query of the empty byWake index
	readRRU := t.Wakes*3 + t.Asks*6 + pollWRU*0.5 + taskWakesRRU

	// Secrets: the stack's three plus one per agent token, the tool token,
	// a webhook token and the Nextcloud app password; grouped: the instance
	// secret and the console password. Every cold start reads every secret
	// the config names, each once.
	secrets := float64(3 + t.Agents + 3)
	if c.GroupedSecrets {
		secrets = float64(len(deploy.Secrets))
	}

	// CloudWatch Logs.
	logBytes := (webhook+tools+jobRuns)*t.LogBytesPerInvocation + worker*t.LogBytesPerRun
	logGBMonth := logBytes * m / bytesPerGB
	stored := logGBMonth * (t.LogMonthsKeptWithoutRetention + 1) / 2 // kept forever: growing since the start, averaged over the year
	if c.LogRetention {
		stored = logGBMonth * float64(deploy.DefaultLogRetentionDays) / daysPerMonth
	}

	alarms := float64(len(deploy.Functions) + len(deploy.StateMachines))
	if c.FewerAlarms {
		alarms = 0
		for _, sm := range deploy.StateMachines {
			if deploy.HasFailedAlarm(sm) {
				alarms++
			}
		}
		for _, f := range deploy.Functions {
			if deploy.HasErrorAlarm(f) {
				alarms++
			}
		}
	}
	const dataGB = 1.0 // tables after a year (audit, receipts, agent messages) — assumed

	return []Line{
		{"Secrets Manager", "secrets", "secret", secrets, secretPerMonth, map[bool]string{false: "one per value", true: "instance secret + console password"}[c.GroupedSecrets]},
		{"Secrets Manager", "GetSecretValue at cold starts", "call", coldStarts * secrets * m, secretPerCall, ""},
		{"Lambda", "requests", "request", (webhook + worker + tools + jobRuns) * m, lambdaPerRequest, ""},
		{"Lambda", "duration", "GB-s", gbs * m, lambdaPerGBSecond, fmt.Sprintf("agent-worker %d MB, jobs %d MB, poll %d at a time",
			memoryMB("agent-worker", c.MeasuredMemory), memoryMB("jobs", c.MeasuredMemory), parallel)},
		{"DynamoDB", "writes of wakes, asks, deliveries, poll markers", "WRU", (t.Wakes*wakeWRU + t.Asks*askWRU + t.Deliveries*deliveryWRU + pollWRU) * m, dynamoPerWRU, ""},
		{"DynamoDB", "job-run records", "WRU", jobRecords * m, dynamoPerWRU, map[bool]string{false: "every run", true: "on change or hourly"}[c.JobRecordsOnChange]},
		{"DynamoDB", "reads", "RRU", readRRU * m, dynamoPerRRU, ""},
		{"DynamoDB", "storage + point-in-time recovery", "GB-month", dataGB, dynamoPerGBMonth + dynamoPITRPerGBMonth, ""},
		{"S3", "PUT and LIST (heartbeat LIST every 5 minutes, tool writes)", "request", (runsPerDay("heartbeat") + t.Wakes*0.3 + t.Deliveries) * m, s3PerPUTorLIST, ""},
		{"S3", "workspace storage", "GB-month", 1, s3PerGBMonth, ""},
		{"Step Functions", "delivery transitions (Standard, 8 each)", "transition", t.Deliveries * 8 * m, sfnPerTransition, ""},
		{"Step Functions", "ask_agent executions (Express)", "request", t.Asks * m, sfnExpressPerRequest, ""},
		{"CloudWatch", "log ingestion", "GB", logGBMonth, logsPerGBIngested, ""},
		{"CloudWatch", "log storage", "GB-month", stored, logsPerGBMonthStored, map[bool]string{false: "kept forever, a year old", true: "30 days"}[c.LogRetention]},
		{"SQS", "wake queue: the event source mapping's long polls while the queue is empty (5 pollers, 20 s each, assumed)", "request", wakeQueuePolls(c) * m, sqsFIFOPerRequest, ""},
		{"SQS", "wake queue: send, change visibility or delete per wake", "request", wakeQueueMessages(c, worker) * m, sqsFIFOPerRequest, ""},
		{"CloudWatch", "alarms", "alarm", alarms, alarmPerMonth, map[bool]string{false: "every function and state machine", true: "agent-worker, jobs, document pipeline"}[c.FewerAlarms]},
	}
}

// wakeQueuePolls is a day's ReceiveMessage calls of Lambda's pollers on an
// empty wake queue: AWS starts an SQS event source with five pollers that
// long-poll for 20 s each (an assumption; not measured here).
func wakeQueuePolls(c Changes) float64 {
	if !c.WakeQueue {
		return 0
	}
	return 5 * 3 * 60 * 24
}

// wakeQueueMessages is a day's SendMessage and DeleteMessage calls (a
// wake's receive comes with a poll that is counted already).
func wakeQueueMessages(c Changes, wakes float64) float64 {
	if !c.WakeQueue {
		return 0
	}
	return 2 * wakes
}

// WakeQueueUSD is what the wake queue adds to a month of t.
func WakeQueueUSD(t Team) float64 {
	with, without := all, all
	without.WakeQueue = false
	return Total(Bill(t, with)) - Total(Bill(t, without))
}

// write renders the bills of t before and after the changes, and what each
// change saves on its own, as the Markdown docs/cost.md shows.
func write(w io.Writer, t Team) error {
	before, after := Bill(t, Changes{}), Bill(t, all)
	var b strings.Builder
	fmt.Fprintf(&b, "Reference team: %d agents, %d people, %s messages, %s wakes, %s asks and %s deliveries a day; %d days a month.\n\n",
		t.Agents, t.People, count(t.Messages), count(t.Wakes), count(t.Asks), count(t.Deliveries), daysPerMonth)
	b.WriteString("| service | what | units a month, before → after | USD per unit | before $ | after $ |\n|---|---|---|---|---|---|\n")
	for i, l := range before {
		a := after[i]
		units := count(l.Units)
		if a.Units != l.Units {
			units += " → " + count(a.Units)
		}
		what := l.What
		if l.Detail != "" {
			what += " (" + l.Detail + " → " + a.Detail + ")"
		}
		fmt.Fprintf(&b, "| %s | %s | %s %s | %s | %.2f | %.2f |\n", l.Service, what, units, l.Unit, price(l.Price), l.USD(), a.USD())
	}
	fmt.Fprintf(&b, "| **total** | | | | **%.2f** | **%.2f** |\n\n", Total(before), Total(after))

	b.WriteString("| change | saves alone, $ a month |\n|---|---|\n")
	for _, ch := range changeNames {
		var c Changes
		ch.set(&c)
		fmt.Fprintf(&b, "| %s | %.2f |\n", ch.name, Total(before)-Total(Bill(t, c)))
	}
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
