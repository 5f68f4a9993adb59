// Package deploy is the one catalogue of what Switchboard deploys: tables,
// functions, routes and schedules. infra/ (CDK), template.yaml (SAM), the
// local runtime's table creation and its in-process scheduler all read it, so
// the four can never drift apart. It is plain data and imports nothing.
package deploy

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Env var names shared by infra and the runtime.
const (
	EnvConfig      = "SWITCHBOARD_CONFIG"       // path of the YAML config (in a zip: relative to /var/task)
	EnvBucket      = "SWITCHBOARD_BUCKET"       // workspace bucket
	EnvTablePrefix = "SWITCHBOARD_TABLE_PREFIX" // prefix for table names when a per-table var is unset
)

// KeyAttr is one key attribute; Type is "S" or "N".
type KeyAttr struct {
	Name string
	Type string
}

// Index is a global secondary index. It projects the attributes in
// Project besides the keys (INCLUDE), or every attribute when Project is
// nil (ALL). An index entry is billed like an item write of the projected
// size, so an index projects only what its queries read.
type Index struct {
	Name    string
	PK      KeyAttr
	SK      KeyAttr
	Project []string
}

// NonKeyAttributes is what ix projects besides the table's and its own
// keys, in the catalogue's order; nil when it projects every attribute.
func (ix Index) NonKeyAttributes(t Table) []string {
	if ix.Project == nil {
		return nil
	}
	out := []string{}
	for _, a := range ix.Project {
		if a != t.PK.Name && a != t.SK.Name && a != ix.PK.Name && a != ix.SK.Name {
			out = append(out, a)
		}
	}
	return out
}

// messageListing is what the agent-message indexes project: every field a
// listing returns except long content, which stays in the base item
// ("body") or the bucket; a listing reads such bodies from the table.
var messageListing = []string{
	"fromAgent", "toAgent", "rootRunId", "month", "id", "pairKey", "channel", "direction",
	"content", "contentRef", "contentBytes", "runId", "parentRunId", "taskId", "taskStatus",
	"status", "reason", "occurredAt",
}

// Table is a DynamoDB table. ID is the logical name ("audit"); the physical
// name comes from EnvVar, or EnvTablePrefix + ID.
type Table struct {
	ID      string
	EnvVar  string
	Doc     string
	PK      KeyAttr
	SK      KeyAttr
	Indexes []Index
	TTLAttr string // "" = no TTL. Local creation skips TTL (dynalite has no UpdateTimeToLive).
	// Stream is the table's DynamoDB stream view ("" = no stream,
	// "NEW_IMAGE"); a Stream entry (SpanStream) names its consumer.
	Stream string
}

var (
	pk        = KeyAttr{"pk", "S"}
	sk        = KeyAttr{"sk", "S"}
	rootRunID = KeyAttr{"rootRunId", "S"}
	fromAgent = KeyAttr{"fromAgent", "S"}
	toAgent   = KeyAttr{"toAgent", "S"}
	month     = KeyAttr{"month", "S"}
	assignee  = KeyAttr{"assignee", "S"}
	creator   = KeyAttr{"creator", "S"}
	openPart  = KeyAttr{"openPart", "S"}
	wakePart  = KeyAttr{"wakePart", "S"}
	createdAt = KeyAttr{"createdKey", "S"}
)

// Index names used by the stores.
const (
	IndexByRoot = "byRoot"
	IndexByFrom = "byFrom" // agent messages by sender, sorted by time
	IndexByTo   = "byTo"   // agent messages by recipient, sorted by time
	// IndexByMonth holds every agent message under its calendar month
	// ("2026-03"), sorted by time: all pairs of a time range without a scan.
	IndexByMonth = "byMonth"

	IndexByAssignee = "byAssignee" // tasks by assignee, sorted by creation
	IndexByCreator  = "byCreator"  // tasks by creator, sorted by creation
	IndexByOpen     = "byOpen"     // unfinished tasks: partitions open (not reported by the watchdog), reported, blocked; oldest first (sparse)
	IndexByWake     = "byWake"     // wakes waiting for the task-wakes job, oldest first (sparse)
)

// Tables is every table Switchboard uses.
var Tables = []Table{
	{
		ID: "audit", EnvVar: "SWITCHBOARD_TABLE_AUDIT",
		Doc: "one item per tool call: pk agent, sk time#id; byRoot answers a whole run chain",
		PK:  pk, SK: sk, TTLAttr: "expiresAt",
		Indexes: []Index{{Name: IndexByRoot, PK: rootRunID, SK: sk}},
	},
	{
		ID: "receipts", EnvVar: "SWITCHBOARD_TABLE_RECEIPTS",
		Doc: "one item per agent run: pk the agent charged (the one that ran, or the one that handed out its task), sk start#runId; byRoot sums a chain's cost",
		PK:  pk, SK: sk, TTLAttr: "expiresAt",
		Indexes: []Index{{Name: IndexByRoot, PK: rootRunID, SK: sk}},
	},
	{
		ID: "state", EnvVar: "SWITCHBOARD_TABLE_STATE",
		Doc: "small state rows: job runs, dedupe markers, poll markers, counters, leases",
		PK:  pk, SK: sk, TTLAttr: "expiresAt",
	},
	{
		ID: "console", EnvVar: "SWITCHBOARD_TABLE_CONSOLE",
		Doc: "the web console's own rows: login sessions and login-attempt counters (the console reads every other table but writes only this one)",
		PK:  pk, SK: sk, TTLAttr: "expiresAt",
	},
	{
		ID: "agentmessages", EnvVar: "SWITCHBOARD_TABLE_AGENTMESSAGES",
		Doc: "agent-to-agent messages: pk pair#a|b, sk time#id; byFrom/byTo list one agent's partners, " +
			"byRoot a chain, byMonth all pairs of a time range; search rows pk tok#word, sk of their message",
		PK: pk, SK: sk, TTLAttr: "expiresAt",
		Indexes: []Index{
			{Name: IndexByRoot, PK: rootRunID, SK: sk, Project: messageListing},
			{Name: IndexByFrom, PK: fromAgent, SK: sk, Project: messageListing},
			{Name: IndexByTo, PK: toAgent, SK: sk, Project: messageListing},
			{Name: IndexByMonth, PK: month, SK: sk, Project: messageListing},
		},
	},
	{
		ID: "tasks", EnvVar: "SWITCHBOARD_TABLE_TASKS",
		Doc: "taskboard tasks: pk task#id; byAssignee/byCreator list one party's tasks, " +
			"byOpen (sparse) the unfinished ones (open, reported by the watchdog, blocked); wake#id items (byWake) wait for task-wakes",
		PK: pk, SK: sk, TTLAttr: "expiresAt",
		Indexes: []Index{
			{Name: IndexByAssignee, PK: assignee, SK: createdAt},
			{Name: IndexByCreator, PK: creator, SK: createdAt},
			{Name: IndexByOpen, PK: openPart, SK: createdAt},
			{Name: IndexByWake, PK: wakePart, SK: createdAt},
		},
	},
	{
		ID: "spans", EnvVar: "SWITCHBOARD_TABLE_SPANS",
		Doc: "finished telemetry spans on their way to the OTLP collector: one item per exported batch, pk spans#day, sk time#random; " +
			"its stream feeds telemetry-export, the TTL drops what no one exported after a day",
		PK: pk, SK: sk, TTLAttr: "expiresAt", Stream: "NEW_IMAGE",
	},
}

// TableName resolves a table's physical name from the environment.
func TableName(t Table, getenv func(string) string) string {
	if n := getenv(t.EnvVar); n != "" {
		return n
	}
	prefix := getenv(EnvTablePrefix)
	if prefix == "" {
		prefix = "switchboard-"
	}
	return prefix + t.ID
}

// Route is one HTTP route a function serves (function URL in AWS, the dev
// listener locally).
type Route struct {
	Method string
	Path   string // Go 1.22 ServeMux pattern path, e.g. /approvals/{id}
}

// Function is one Lambda: functions/<Name>/main.go.
type Function struct {
	Name        string
	Description string
	// URLAuth is "" (no function URL), "AWS_IAM" or "NONE" (the handler
	// checks a token or signature itself).
	URLAuth        string
	Routes         []Route
	MemoryMB       int
	TimeoutSeconds int
	Tables         []string // table IDs it reads and writes
	// ReadTables lists table IDs it only reads (no write action granted);
	// a table is in Tables or ReadTables, never both.
	ReadTables []string
	Bucket     bool // reads and writes the workspace bucket
	// Invokes lists functions this one invokes asynchronously; each gets
	// the invoke grant and its name in FunctionEnvVar(name) — except the
	// agent-worker, which gets its wakes through WakeQueue.
	Invokes []string
	// RunsAgents: calls models (bedrock:InvokeModel on foundation models
	// and inference profiles).
	RunsAgents bool
	// AsyncRetries is how often Lambda retries a failed async invocation
	// of this function (0–2); only for functions others invoke.
	AsyncRetries int
}

// SecretNamePrefix: functions may read Secrets Manager secrets whose names
// start with it (config references like secretsmanager:switchboard/rc-token).
const SecretNamePrefix = "switchboard/"

// WakeQueue is the SQS FIFO queue that hands wakes to the agent-worker: a
// function that lists the agent-worker in Invokes sends its wakes there
// (sqs:SendMessage, the URL in EnvWakeQueueURL) instead of invoking it.
// Each agent is a message group, so SQS hands an agent's next wake to the
// agent-worker only once the one before it is done: one agent's runs take
// turns without waiting on its lease, other agents' runs go side by side.
// A wake that fails comes again (the agent-worker sets the delay); after
// MaxReceives receives it moves to the dead-letter queue.
var WakeQueue = Queue{Name: "wakes", Consumer: "agent-worker", MaxReceives: 3}

// Queue is an SQS FIFO queue feeding one function, one message at a time.
type Queue struct {
	Name        string
	Consumer    string
	MaxReceives int
}

// LogicalID of the queue and of its dead-letter queue.
func (q Queue) LogicalID() string           { return LogicalID(q.Name, "Queue") }
func (q Queue) DeadLetterLogicalID() string { return LogicalID(q.Name, "DeadLetterQueue") }

// VisibilitySeconds is how long a received wake stays hidden: longer than
// the consumer's timeout, as Lambda's event source mapping requires.
func (q Queue) VisibilitySeconds() int {
	f, ok := FunctionByName(q.Consumer)
	if !ok {
		panic(fmt.Sprintf("queue %s: no consumer function %q in shared/platform/deploy", q.Name, q.Consumer))
	}
	return f.TimeoutSeconds + 30
}

// Stream is a table's DynamoDB stream feeding one function (an event
// source mapping with batch item failures): a batch that fails is retried
// from the first failed record up to MaxRetries times, then skipped.
type Stream struct {
	Table     string // table ID
	Consumer  string
	BatchSize int
	// MaxRetries bounds the retries of a failing batch; MaxRecordAgeSeconds
	// drops a record that old, whatever the retries left.
	MaxRetries          int
	MaxRecordAgeSeconds int
}

// LogicalID of the event source mapping.
func (s Stream) LogicalID() string { return LogicalID(s.Table, "Stream") }

// SpanStream hands the span table's new items to telemetry-export, which
// sends them to the collector. A collector that is down fails the batch:
// three retries (a few seconds apart, Lambda's backoff), then the records
// are skipped; their items stay in the table until the TTL deletes them.
var SpanStream = Stream{Table: "spans", Consumer: "telemetry-export", BatchSize: 100, MaxRetries: 3, MaxRecordAgeSeconds: 3600}

// DeadLetterRetentionSeconds keeps a wake that failed every receive 14 days
// (SQS's maximum), for the operator to look at.
const DeadLetterRetentionSeconds = 14 * 24 * 3600

// EnvWakeQueueURL carries the wake queue's URL to the functions that send wakes.
const EnvWakeQueueURL = "SWITCHBOARD_WAKE_QUEUE_URL"

// SendsWakes reports whether f hands wakes to the agent-worker, through
// the wake queue: the functions that list it in Invokes, and the
// agent-worker itself (the wakes an agent's own Taskboard call causes; a
// task chain is at most a few hand-overs long, far from the 16 hops after
// which Lambda stops a function that feeds itself through a queue).
func SendsWakes(f Function) bool {
	return f.Name == WakeQueue.Consumer || slices.Contains(f.Invokes, WakeQueue.Consumer)
}

// FunctionEnvVar names the env var that carries a function's deployed name
// to the functions that invoke it, SWITCHBOARD_FN_<NAME> (the agent-worker
// gets its wakes through WakeQueue instead).
func FunctionEnvVar(name string) string {
	return "SWITCHBOARD_FN_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// Functions is every Lambda.
var Functions = []Function{
	{
		Name: "tools", Description: "tool registry and tool execution (GET /tools, POST /tools/invoke)",
		URLAuth: "AWS_IAM",
		Routes:  []Route{{"GET", "/tools"}, {"POST", "/tools/invoke"}},
		// A tool call may upload a file (route budget 55 s); the document
		// pipeline's convert step waits for Collabora up to its own 100 s.
		MemoryMB: 256, TimeoutSeconds: 120,
		// agentmessages: it records the ask-agent machine's rows and the
		// Taskboard's; tasks, agent-worker: a Taskboard call records the task
		// and wakes the other party. The AgentCommAnalysis tool reads the
		// messages and the chain costs.
		Tables: []string{"audit", "state", "tasks", "agentmessages", "spans"}, Bucket: true,
		ReadTables: []string{"receipts"},
		Invokes:    []string{"agent-worker"},
	},
	{
		Name: "mcp", Description: "the agents' tools for MCP clients (POST /mcp, Streamable HTTP, stateless)",
		URLAuth: "NONE", // the handler checks each client's bearer token in constant time
		Routes:  []Route{{"POST", "/mcp"}},
		// The same calls as the tools function: a call may upload a file,
		// record a task, wake an agent or stage an approval (state).
		MemoryMB: 256, TimeoutSeconds: 120,
		Tables: []string{"audit", "state", "tasks", "agentmessages", "spans"}, Bucket: true,
		ReadTables: []string{"receipts"},
		Invokes:    []string{"agent-worker"},
	},
	{
		Name: "jobs", Description: "runs a scheduled job named in the event ({\"job\":…})",
		// 128 MB: the whole dev runtime peaked at 52 MB (VmHWM) over the
		// end-to-end runs, and no job holds a file; its 4,000 runs a day
		// have no one waiting on them, so the smaller CPU share costs no one.
		MemoryMB: 128, TimeoutSeconds: 120,
		// agentmessages: the heartbeat describes every table.
		// tasks: the task-watchdog job.
		// spans (here, in tools, mcp and the agent-worker): the spans it
		// records when instance.telemetry.otlp is set (docs/telemetry.md).
		Tables: []string{"audit", "receipts", "state", "agentmessages", "tasks", "spans"}, Bucket: true,
		Invokes: []string{"agent-worker"},
	},
	{
		Name: "rocketchat-webhook", Description: "Rocket.Chat outgoing webhook receiver (POST /hooks/rocketchat); queues wakes",
		URLAuth:  "NONE", // the handler checks the body token in constant time
		Routes:   []Route{{"POST", "/hooks/rocketchat"}},
		MemoryMB: 256, TimeoutSeconds: 10,
		Tables: []string{"state"}, Invokes: []string{"agent-worker"},
	},
	{
		Name: "approvals", Description: "approval links: GET shows a confirmation page, POST decides",
		URLAuth:  "NONE", // signed, expiring, single-use tokens in the link
		Routes:   []Route{{"GET", "/approvals/{id}"}, {"POST", "/approvals/{id}"}},
		MemoryMB: 256, TimeoutSeconds: 60,
		Tables: []string{"audit", "state"}, Invokes: []string{"agent-worker"},
	},
	{
		Name: "telegram-webhook", Description: "Telegram updates (POST /hooks/telegram): approval buttons and messages to agents",
		URLAuth:  "NONE", // X-Telegram-Bot-Api-Secret-Token checked in the handler
		Routes:   []Route{{"POST", "/hooks/telegram"}},
		MemoryMB: 256, TimeoutSeconds: 60,
		Tables: []string{"audit", "state"}, Invokes: []string{"agent-worker"},
	},
	{
		Name: "console", Description: "the operator's web console (GET /console/): conversations, run chains and costs, what needs attention, approvals waiting, job health",
		URLAuth:  "NONE", // the console's own password login is the credential
		Routes:   []Route{{"GET", "/console/{$}"}, {"GET", "/console/{page}"}, {"POST", "/console/{page}"}},
		MemoryMB: 256, TimeoutSeconds: 15,
		// It writes its own sessions and login counters, and the operator's
		// pause, resume and stop (state, their audit entries); a resume
		// queues the wakes that waited (agent-worker).
		Tables:     []string{"console", "audit", "state"},
		ReadTables: []string{"receipts", "agentmessages", "tasks"},
		Invokes:    []string{"agent-worker"},
	},
	{
		Name: "agent-worker", Description: "runs one woken agent (a wake from the wake queue) and replies where it was woken",
		// 256 MB: the whole dev runtime peaked at 52 MB (VmHWM) over the
		// end-to-end runs, plus up to two 25 MB file bodies of a tool call;
		// a run mostly waits for the model, and waiting is billed by the
		// GB-second. Lambda's CPU share halves with the memory (1/7 of a
		// vCPU here), which the run's few milliseconds of JSON and scrubbing
		// can spare.
		MemoryMB: 256, TimeoutSeconds: 600,
		// tasks, agentmessages: an agent's Taskboard calls record the task
		// and its message; the wakes they cause go to the wake queue
		// (SendsWakes).
		Tables: []string{"audit", "receipts", "state", "tasks", "agentmessages", "spans"}, Bucket: true,
		RunsAgents: true,
	},
	{
		Name: "telemetry-export", Description: "sends the spans the span table's stream brings to the OTLP collector (instance.telemetry.otlp)",
		// 128 MB: it decodes a few KB of spans per item and posts them;
		// 60 s: a batch of 100 items, each export cut after 2 s (a dead
		// collector fails the batch at its first item).
		MemoryMB: 128, TimeoutSeconds: 60,
	},
}

// Job is a scheduled job. Schedule is an EventBridge rate expression; the
// dev scheduler runs the same expressions in-process.
type Job struct {
	Name        string
	Function    string
	Schedule    string
	Description string
}

// Jobs is every scheduled job.
var Jobs = []Job{
	{Name: "heartbeat", Function: "jobs", Schedule: "rate(5 minutes)",
		Description: "checks that every table and the bucket answer and records the result"},
	{Name: "rocketchat-poll", Function: "jobs", Schedule: "rate(1 minute)",
		Description: "polls every agent's Rocket.Chat subscriptions and wakes agents for new DMs and mentions"},
	{Name: "nextcloud-cleanup", Function: "jobs", Schedule: "rate(1 day)",
		Description: "deletes reports older than reportsMaxAgeDays in every agent's Nextcloud reports folder"},
	{Name: "approvals-expire", Function: "jobs", Schedule: "rate(15 minutes)",
		Description: "closes approvals past their expiry and tells the requesting agents"},
	{Name: "telegram-poll", Function: "jobs", Schedule: "rate(5 minutes)",
		Description: "slow getUpdates poll for when no Telegram webhook is set"},
	{Name: "rocketchat-health", Function: "jobs", Schedule: "rate(5 minutes)",
		Description: "checks Rocket.Chat's /api/info; after 3 failures one notice through the next channel, one on recovery"},
	{Name: "task-watchdog", Function: "jobs", Schedule: "rate(15 minutes)",
		Description: "tells the human once about each task open longer than instance.taskboard.watchdogHours"},
	{Name: "task-wakes", Function: "jobs", Schedule: "rate(10 minutes)",
		Description: "queues the taskboard wakes and delivers the notices that could not be queued or delivered when they arose"},
}

// HasErrorAlarm says whether a function gets an alarm on its errors: the
// ones no caller sees fail, because they run asynchronously or on a
// schedule (no function URL). A URL function's errors reach its caller (a
// 5xx that Rocket.Chat and Telegram retry, the console's or the tool
// caller's answer), and the tools function's calls from the state machines
// are covered by the machines' own failed-executions alarms. Each alarm
// costs $0.10 a month (docs/cost.md). The telemetry-export function gets
// none: it reports a collector that is down as batch item failures, not
// errors, and what it loses is spans, which hold up no one.
func HasErrorAlarm(f Function) bool { return f.URLAuth == "" && f.Name != SpanStream.Consumer }

// FunctionByName finds a function.
func FunctionByName(name string) (Function, bool) {
	for _, f := range Functions {
		if f.Name == name {
			return f, true
		}
	}
	return Function{}, false
}

// JobByName finds a job.
func JobByName(name string) (Job, bool) {
	for _, j := range Jobs {
		if j.Name == name {
			return j, true
		}
	}
	return Job{}, false
}

// TableByID finds a table.
func TableByID(id string) (Table, bool) {
	for _, t := range Tables {
		if t.ID == id {
			return t, true
		}
	}
	return Table{}, false
}

// ParseRate turns "rate(5 minutes)" into 5m. Only rate expressions are used
// so that AWS and the dev scheduler agree without a cron engine.
func ParseRate(expr string) (time.Duration, error) {
	inner, ok := strings.CutPrefix(expr, "rate(")
	if !ok || !strings.HasSuffix(inner, ")") {
		return 0, fmt.Errorf("schedule %q: want rate(N unit)", expr)
	}
	n, unit, ok := strings.Cut(strings.TrimSuffix(inner, ")"), " ")
	v, err := strconv.Atoi(n)
	if !ok || err != nil || v < 1 {
		return 0, fmt.Errorf("schedule %q: want a positive whole number before the unit", expr)
	}
	units := map[string]time.Duration{"minute": time.Minute, "minutes": time.Minute,
		"hour": time.Hour, "hours": time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour}
	d, ok := units[unit]
	if !ok || (v == 1) != !strings.HasSuffix(unit, "s") {
		// EventBridge insists on "1 minute" but "5 minutes".
		return 0, fmt.Errorf("schedule %q: unit must be minute|hour|day for 1, minutes|hours|days otherwise", expr)
	}
	return time.Duration(v) * d, nil
}
