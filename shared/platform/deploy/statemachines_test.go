package deploy

import (
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// askAgentForTest is the ask_agent machine as the catalogue must hold it:
// guard and records on tools, the answering run on agent-worker, started
// by agent-worker (where asking runs run).
func askAgentForTest() StateMachine {
	return StateMachine{
		Name: "ask-agent", Definition: StateMachineDir + "/ask-agent.asl.json", Type: "EXPRESS", LogLevel: "ERROR", StartedSync: true,
		Substitutions: []Substitution{
			{Key: "AskGuardFunctionArn", Function: "tools"},
			{Key: "AgentMessageFunctionArn", Function: "tools"},
			{Key: "AskRunFunctionArn", Function: "agent-worker"},
		},
		StartedBy: []string{"agent-worker"},
	}
}

func withStateMachines(t *testing.T, ms ...StateMachine) {
	saved := StateMachines
	StateMachines = ms
	t.Cleanup(func() { StateMachines = saved })
}

var placeholderRE = regexp.MustCompile(`\$\{([A-Za-z0-9_]+)\}`)

// placeholders lists the ${Key}s of an ASL file, sorted and once each.
func placeholders(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile("../../../" + file)
	if err != nil {
		t.Fatalf("state machine definition: %v", err)
	}
	var keys []string
	for _, m := range placeholderRE.FindAllStringSubmatch(string(b), -1) {
		keys = append(keys, m[1])
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// Every placeholder of a definition gets a function and every substitution
// is used, for the catalogued machines and the ask_agent one waiting to join.
func TestStateMachineSubstitutionsMatchTheFile(t *testing.T) {
	for _, m := range append(slices.Clone(StateMachines), askAgentForTest()) {
		var keys []string
		for _, s := range m.Substitutions {
			keys = append(keys, s.Key)
		}
		slices.Sort(keys)
		if got := placeholders(t, m.Definition); !slices.Equal(got, keys) {
			t.Errorf("%s: %s has placeholders %v, the catalogue substitutes %v", m.Name, m.Definition, got, keys)
		}
		if !strings.HasPrefix(m.Definition, StateMachineDir+"/") || !strings.HasSuffix(m.Definition, ".asl.json") {
			t.Errorf("%s: definition %s, want %s/*.asl.json (make test validates those)", m.Name, m.Definition, StateMachineDir)
		}
		if err := CheckStateMachine(m); err != nil {
			t.Error(err)
		}
	}
}

func TestSAMStateMachine(t *testing.T) {
	withStateMachines(t, askAgentForTest())
	tpl := string(SAMTemplate())
	res := samResources(t, tpl)
	sm := res["AskAgentStateMachine"]
	for _, want := range []string{
		"Type: AWS::Serverless::StateMachine",
		"Type: EXPRESS",
		`Name: !Sub "${AWS::StackName}-ask-agent"`,
		"DefinitionUri: infra/statemachines/ask-agent.asl.json",
		"AskGuardFunctionArn: !GetAtt ToolsFunction.Arn",
		"AskRunFunctionArn: !GetAtt AgentWorkerFunction.Arn",
		"Level: ERROR",
		"IncludeExecutionData: false",
		"LogGroupArn: !GetAtt AskAgentStateMachineLogs.Arn",
		"FunctionName: !Ref ToolsFunction",
		"FunctionName: !Ref AgentWorkerFunction",
		"- logs:CreateLogDelivery",
	} {
		if !strings.Contains(sm, want) {
			t.Errorf("AskAgentStateMachine lacks %q:\n%s", want, sm)
		}
	}
	if a, ok := res["AskAgentExecutionsFailed"]; ok {
		t.Errorf("a failed-executions alarm on a machine started only synchronously:\n%s", a)
	}
	async := askAgentForTest()
	async.StartedSync = false
	withStateMachines(t, async)
	if a := samResources(t, string(SAMTemplate()))["AskAgentExecutionsFailed"]; !strings.Contains(a, "Value: !Ref AskAgentStateMachine") {
		t.Errorf("no failed-executions alarm on a machine started asynchronously:\n%s", a)
	}
	worker := res["AgentWorkerFunction"]
	arn := `!Sub "arn:${AWS::Partition}:states:${AWS::Region}:${AWS::AccountId}:stateMachine:${AWS::StackName}-ask-agent"`
	for _, want := range []string{"SWITCHBOARD_SM_ASK_AGENT: " + arn, "- states:StartSyncExecution", "- " + arn} {
		if !strings.Contains(worker, want) {
			t.Errorf("AgentWorkerFunction lacks %q:\n%s", want, worker)
		}
	}
	if strings.Contains(res["ToolsFunction"], "states:Start") {
		t.Errorf("tools may start the machine but is not listed in StartedBy:\n%s", res["ToolsFunction"])
	}
}

// A function that resumes a machine's waiting Tasks may send task results
// for that machine, and nothing else of Step Functions.
func TestSAMResumeGrant(t *testing.T) {
	m := askAgentForTest()
	m.ResumedBy = []string{"approvals"}
	withStateMachines(t, m)
	res := samResources(t, string(SAMTemplate()))
	arn := `!Sub "arn:${AWS::Partition}:states:${AWS::Region}:${AWS::AccountId}:stateMachine:${AWS::StackName}-ask-agent"`
	for _, want := range []string{"- states:SendTaskSuccess", "- states:SendTaskFailure", "- " + arn} {
		if !strings.Contains(res["ApprovalsFunction"], want) {
			t.Errorf("ApprovalsFunction lacks %q:\n%s", want, res["ApprovalsFunction"])
		}
	}
	if strings.Contains(res["ApprovalsFunction"], "states:Start") || strings.Contains(res["ApprovalsFunction"], "SWITCHBOARD_SM_") {
		t.Errorf("ApprovalsFunction may start the machine but only resumes it:\n%s", res["ApprovalsFunction"])
	}
	if strings.Contains(res["TelegramWebhookFunction"], "states:SendTask") {
		t.Errorf("telegram-webhook may resume a machine it is not listed for:\n%s", res["TelegramWebhookFunction"])
	}
}

// A function that stops a machine's executions may read and stop its
// executions (not the machine, not another machine's), and nothing else
// of Step Functions.
func TestSAMStopGrant(t *testing.T) {
	m := askAgentForTest()
	m.Type, m.StoppedBy = "STANDARD", []string{"console"}
	withStateMachines(t, m)
	res := samResources(t, string(SAMTemplate()))
	arn := `!Sub "arn:${AWS::Partition}:states:${AWS::Region}:${AWS::AccountId}:execution:${AWS::StackName}-ask-agent:*"`
	for _, want := range []string{"- states:DescribeExecution", "- states:StopExecution", "- " + arn} {
		if !strings.Contains(res["ConsoleFunction"], want) {
			t.Errorf("ConsoleFunction lacks %q:\n%s", want, res["ConsoleFunction"])
		}
	}
	if strings.Contains(res["ConsoleFunction"], "states:Start") || strings.Contains(res["ConsoleFunction"], "states:SendTask") || strings.Contains(res["ConsoleFunction"], "SWITCHBOARD_SM_") {
		t.Errorf("ConsoleFunction may start or resume the machine but only stops it:\n%s", res["ConsoleFunction"])
	}
	if strings.Contains(res["TelegramWebhookFunction"], "states:StopExecution") {
		t.Errorf("telegram-webhook may stop a machine it is not listed for:\n%s", res["TelegramWebhookFunction"])
	}
}

func TestCheckStateMachine(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(*StateMachine)
		wantErr string
	}{
		{"valid", func(*StateMachine) {}, ""},
		{"type", func(m *StateMachine) { m.Type = "express" }, `type "express"`},
		{"log level", func(m *StateMachine) { m.LogLevel = "" }, `log level ""`},
		{"unknown function", func(m *StateMachine) { m.Substitutions[0].Function = "nope" }, `${AskGuardFunctionArn} names unknown function "nope"`},
		{"unknown starter", func(m *StateMachine) { m.StartedBy = []string{"nope"} }, `started by unknown function "nope"`},
		{"unknown resumer", func(m *StateMachine) { m.ResumedBy = []string{"nope"} }, `resumed by unknown function "nope"`},
		{"unknown stopper", func(m *StateMachine) { m.Type, m.StoppedBy = "STANDARD", []string{"nope"} }, `stopped by unknown function "nope"`},
		{"stopping an express machine", func(m *StateMachine) { m.StoppedBy = []string{"console"} }, "StopExecution works only on STANDARD machines"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := askAgentForTest()
			tt.edit(&m)
			err := CheckStateMachine(m)
			if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("got %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// The ask_agent machine is deployed as the catalogue entry above describes,
// and the function that records its rows may write the messages table.
func TestAskAgentIsCatalogued(t *testing.T) {
	var got *StateMachine
	for i := range StateMachines {
		if StateMachines[i].Name == "ask-agent" {
			got = &StateMachines[i]
		}
	}
	if got == nil || !reflect.DeepEqual(*got, askAgentForTest()) {
		t.Fatalf("catalogue ask-agent = %+v, want %+v", got, askAgentForTest())
	}
	tools, _ := FunctionByName("tools")
	if !slices.Contains(tools.Tables, "agentmessages") {
		t.Errorf("tools tables %v: it records the machine's rows, so it needs agentmessages", tools.Tables)
	}
}
