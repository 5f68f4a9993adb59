package deploy

import (
	"fmt"
	"slices"
	"strings"
)

// StateMachine is a Step Functions state machine: one ASL file that the CDK
// app (DefinitionBody from the file), template.yaml (DefinitionUri) and the
// local runtime (sfnlocal) all use as it is. Its ${Key} placeholders are
// filled with the ARNs of catalogue functions, as DefinitionSubstitutions.
type StateMachine struct {
	Name string // "ask-agent"
	// Definition is the ASL file, relative to the repository root.
	Definition string
	Type       string // "EXPRESS" or "STANDARD"
	// Substitutions name, per placeholder, the catalogue function whose
	// ARN replaces it; the machine may invoke exactly these.
	Substitutions []Substitution
	// StartedBy lists the functions that may start the machine; each gets
	// the start grant and the machine's ARN in StateMachineEnvVar(Name).
	StartedBy []string
	// ResumedBy lists the functions that resume or fail its waiting Tasks
	// (task tokens: SendTaskSuccess/SendTaskFailure on this machine only).
	ResumedBy []string
	// StoppedBy lists the functions that stop its running executions when
	// the operator stops the chain that started them (DescribeExecution
	// and StopExecution on this machine's executions only).
	StoppedBy []string
	// StartedSync says the machine is only started with
	// StartSyncExecution: its caller waits for the result and gets every
	// failure (HasFailedAlarm).
	StartedSync bool
	// LogLevel of the execution log (ALL, ERROR, FATAL). Execution data
	// (inputs and outputs) is never logged: it holds message contents,
	// which the tables keep scrubbed.
	LogLevel string
}

// HasFailedAlarm says whether a machine gets an alarm on its failed
// executions: the ones started asynchronously, whose failures nobody
// waits for. A machine started only with StartSyncExecution (ask_agent)
// hands every failure to its caller, the asking run, which tells its
// agent; an alarm there would cost $0.10 a month (docs/cost.md) to say
// what the caller already knows.
func HasFailedAlarm(m StateMachine) bool { return !m.StartedSync }

// Substitution fills one ${Key} of a definition with a function's ARN.
type Substitution struct {
	Key      string // "AskGuardFunctionArn"
	Function string // catalogue function name
}

// StateMachineDir holds every ASL file, relative to the repository root.
const StateMachineDir = "infra/statemachines"

// StateMachineLogRetentionDays keeps execution logs for a month.
const StateMachineLogRetentionDays = 30

// StateMachines is every deployed state machine.
var StateMachines = []StateMachine{
	{
		// ask_agent: the asking run (agent-worker) starts it synchronously;
		// the guard (which records the question) and the rows of a timeout
		// or a failure run on tools, the asked agent's run (which records
		// its answer) on agent-worker (which has the models).
		Name: "ask-agent", Definition: StateMachineDir + "/ask-agent.asl.json", Type: "EXPRESS", LogLevel: "ERROR", StartedSync: true,
		Substitutions: []Substitution{
			{Key: "AskGuardFunctionArn", Function: "tools"},
			{Key: "AgentMessageFunctionArn", Function: "tools"},
			{Key: "AskRunFunctionArn", Function: "agent-worker"},
		},
		StartedBy: []string{"agent-worker"},
	},
	{
		// Documents.deliver: started by the run that calls the tool
		// (agent-worker) or through the tool API (tools); every step runs
		// on tools, which has the Nextcloud and Rocket.Chat tools. Standard:
		// a public link waits for a human, and Retry-After waits are long.
		Name: "document-pipeline", Definition: StateMachineDir + "/document-pipeline.asl.json", Type: "STANDARD", LogLevel: "ERROR",
		Substitutions: []Substitution{
			{Key: "DocumentStepFunctionArn", Function: "tools"},
		},
		StartedBy: []string{"agent-worker", "tools"},
		// A public link waits for a human: the deciding functions resume
		// or fail it, the approvals-expire job fails it on expiry, and
		// tools resumes it when the policy needs no one.
		ResumedBy: []string{"approvals", "telegram-webhook", "jobs", "tools"},
		// The operator's stop of a chain: the console's POST, an
		// approver's /stop on the Telegram webhook or through the jobs'
		// telegram-poll.
		StoppedBy: []string{"console", "telegram-webhook", "jobs"},
	},
}

// StateMachineEnvVar names the env var that carries a machine's ARN to the
// functions that start it: ask-agent → SWITCHBOARD_SM_ASK_AGENT.
func StateMachineEnvVar(name string) string {
	return "SWITCHBOARD_SM_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// StateMachineNameSub is a machine's physical name as a CloudFormation
// Fn::Sub string, and StateMachineARNSub its ARN built from that name. The
// functions that start a machine get the ARN this way, not by Ref: a
// function may also be one the machine invokes, and a Ref both ways would
// be a dependency cycle CloudFormation rejects. (Names are at most 80
// characters: keep stack names short.)
func StateMachineNameSub(name string) string { return "${AWS::StackName}-" + name }

// StateMachineARNSub: see StateMachineNameSub.
func StateMachineARNSub(name string) string {
	return "arn:${AWS::Partition}:states:${AWS::Region}:${AWS::AccountId}:stateMachine:" + StateMachineNameSub(name)
}

// StateMachineExecutionsARNSub matches every execution of a machine (the
// resource of DescribeExecution and StopExecution).
func StateMachineExecutionsARNSub(name string) string {
	return "arn:${AWS::Partition}:states:${AWS::Region}:${AWS::AccountId}:execution:" + StateMachineNameSub(name) + ":*"
}

// StateMachineActions are granted to the functions that start a machine.
var StateMachineActions = []string{"states:StartExecution", "states:StartSyncExecution"}

// StateMachineTokenActions are granted to the functions that resume a
// machine's waiting Tasks.
var StateMachineTokenActions = []string{"states:SendTaskSuccess", "states:SendTaskFailure"}

// StateMachineStopActions are granted, on a machine's executions, to the
// functions that stop them: the stop reads the status first, so that it
// counts only the executions it ended.
var StateMachineStopActions = []string{"states:DescribeExecution", "states:StopExecution"}

// StateMachineLogActions let Step Functions deliver execution logs; AWS
// requires them on "*" (log deliveries have no resource ARN).
var StateMachineLogActions = []string{
	"logs:CreateLogDelivery", "logs:GetLogDelivery", "logs:UpdateLogDelivery", "logs:DeleteLogDelivery",
	"logs:ListLogDeliveries", "logs:PutResourcePolicy", "logs:DescribeResourcePolicies", "logs:DescribeLogGroups",
}

// CheckStateMachine reports what is wrong with a catalogue entry.
func CheckStateMachine(m StateMachine) error {
	if m.Type != "EXPRESS" && m.Type != "STANDARD" {
		return fmt.Errorf("state machine %s: type %q in shared/platform/deploy, want EXPRESS or STANDARD", m.Name, m.Type)
	}
	switch m.LogLevel {
	case "ALL", "ERROR", "FATAL":
	default:
		return fmt.Errorf("state machine %s: log level %q in shared/platform/deploy, want ALL, ERROR or FATAL", m.Name, m.LogLevel)
	}
	for _, s := range m.Substitutions {
		if _, ok := FunctionByName(s.Function); !ok {
			return fmt.Errorf("state machine %s: ${%s} names unknown function %q in shared/platform/deploy", m.Name, s.Key, s.Function)
		}
	}
	for _, fn := range m.StartedBy {
		if _, ok := FunctionByName(fn); !ok {
			return fmt.Errorf("state machine %s is started by unknown function %q in shared/platform/deploy", m.Name, fn)
		}
	}
	for _, fn := range m.ResumedBy {
		if _, ok := FunctionByName(fn); !ok {
			return fmt.Errorf("state machine %s is resumed by unknown function %q in shared/platform/deploy", m.Name, fn)
		}
	}
	for _, fn := range m.StoppedBy {
		if _, ok := FunctionByName(fn); !ok {
			return fmt.Errorf("state machine %s is stopped by unknown function %q in shared/platform/deploy", m.Name, fn)
		}
	}
	if len(m.StoppedBy) > 0 && m.Type != "STANDARD" {
		return fmt.Errorf("state machine %s lists StoppedBy, but StopExecution works only on STANDARD machines (it is %s)", m.Name, m.Type)
	}
	return nil
}

// startedBy lists the machines a function may start.
func startedBy(fn string) []StateMachine {
	var out []StateMachine
	for _, m := range StateMachines {
		for _, s := range m.StartedBy {
			if s == fn {
				out = append(out, m)
			}
		}
	}
	return out
}

// resumedBy lists the machines whose waiting Tasks a function may resume.
func resumedBy(fn string) []StateMachine {
	var out []StateMachine
	for _, m := range StateMachines {
		if slices.Contains(m.ResumedBy, fn) {
			out = append(out, m)
		}
	}
	return out
}

// stoppedBy lists the machines whose executions a function may stop.
func stoppedBy(fn string) []StateMachine {
	var out []StateMachine
	for _, m := range StateMachines {
		if slices.Contains(m.StoppedBy, fn) {
			out = append(out, m)
		}
	}
	return out
}

// stateMachine writes the AWS::Serverless::StateMachine of m with its log
// group and its failed-executions alarm.
func (w *samWriter) stateMachine(m StateMachine) {
	if err := CheckStateMachine(m); err != nil {
		panic(err.Error())
	}
	id := LogicalID(m.Name, "StateMachine")
	w.line(1, "%sLogs:", id)
	w.line(2, "Type: AWS::Logs::LogGroup")
	w.line(2, "Properties:")
	w.line(3, "RetentionInDays: %d", StateMachineLogRetentionDays)
	w.line(1, "%s:", id)
	w.line(2, "Type: AWS::Serverless::StateMachine")
	w.line(2, "Properties:")
	w.line(3, "Name: !Sub %s", quote(StateMachineNameSub(m.Name)))
	w.line(3, "Type: %s", m.Type)
	w.line(3, "DefinitionUri: %s", m.Definition)
	if len(m.Substitutions) > 0 {
		w.line(3, "DefinitionSubstitutions:")
		for _, s := range m.Substitutions {
			w.line(4, "%s: !GetAtt %s.Arn", s.Key, LogicalID(s.Function, "Function"))
		}
	}
	w.line(3, "Logging:")
	w.line(4, "Level: %s", m.LogLevel)
	w.line(4, "IncludeExecutionData: false")
	w.line(4, "Destinations:")
	w.line(5, "- CloudWatchLogsLogGroup:")
	w.line(7, "LogGroupArn: !GetAtt %sLogs.Arn", id)
	w.line(3, "Policies:")
	for _, s := range m.Substitutions {
		w.line(4, "- LambdaInvokePolicy:")
		w.line(6, "FunctionName: !Ref %s", LogicalID(s.Function, "Function"))
	}
	w.line(4, "- Statement:")
	w.line(6, "- Effect: Allow")
	w.line(7, "Action:")
	for _, a := range StateMachineLogActions {
		w.line(8, "- %s", a)
	}
	w.line(7, "Resource: \"*\"")
	if HasFailedAlarm(m) {
		w.sumAlarm(LogicalID(m.Name, "ExecutionsFailed"), "failed executions of the "+m.Name+" state machine",
			"AWS/States", "ExecutionsFailed", "StateMachineArn", id)
	}
}

// startGrant writes, inside a function's inline policy, the statements
// that let it start, resume and stop the machines it is listed for.
func (w *samWriter) startGrant(fn string) {
	for _, m := range startedBy(fn) {
		w.line(6, "- Effect: Allow")
		w.line(7, "Action:")
		for _, a := range StateMachineActions {
			w.line(8, "- %s", a)
		}
		w.line(7, "Resource:")
		w.line(8, "- !Sub %s", quote(StateMachineARNSub(m.Name)))
	}
	for _, m := range resumedBy(fn) {
		w.line(6, "- Effect: Allow")
		w.line(7, "Action:")
		for _, a := range StateMachineTokenActions {
			w.line(8, "- %s", a)
		}
		w.line(7, "Resource:")
		w.line(8, "- !Sub %s", quote(StateMachineARNSub(m.Name)))
	}
	for _, m := range stoppedBy(fn) {
		w.line(6, "- Effect: Allow")
		w.line(7, "Action:")
		for _, a := range StateMachineStopActions {
			w.line(8, "- %s", a)
		}
		w.line(7, "Resource:")
		w.line(8, "- !Sub %s", quote(StateMachineExecutionsARNSub(m.Name)))
	}
}
