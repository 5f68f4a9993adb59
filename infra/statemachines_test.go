package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
)

// TestStateMachine deploys the real ask-agent file with its placeholders
// filled by the one function of a mini catalogue and checks what the stack makes of it.
func TestStateMachine(t *testing.T) {
	machine := deploy.StateMachine{
		Name: "ask-agent", Definition: deploy.StateMachineDir + "/ask-agent.asl.json", Type: "EXPRESS", LogLevel: "ERROR", StartedSync: true,
		Substitutions: []deploy.Substitution{
			{Key: "AskGuardFunctionArn", Function: "a"},
			{Key: "AgentMessageFunctionArn", Function: "a"},
			{Key: "AskRunFunctionArn", Function: "a"},
		},
		StartedBy: []string{"a"},
	}
	js := miniApp(t, SwitchboardStackProps{}, machine)

	_, sm := byConstruct(t, js, "AWS::StepFunctions::StateMachine", "AskAgentStateMachine")
	p := props(sm)
	fnID := idOf(t, js, "AWS::Lambda::Function", "AFunction")
	if name, _ := json.Marshal(p["StateMachineName"]); string(name) != `{"Fn::Sub":"${AWS::StackName}-ask-agent"}` {
		t.Errorf("StateMachineName %s, want the stack name and ask-agent (the starters build the ARN from it)", name)
	}
	if p["StateMachineType"] != "EXPRESS" {
		t.Errorf("StateMachineType %v, want EXPRESS", p["StateMachineType"])
	}
	if _, ok := p["DefinitionS3Location"]; !ok {
		t.Errorf("definition not deployed from the file (no DefinitionS3Location): %v", keys(p))
	}
	subs, _ := p["DefinitionSubstitutions"].(map[string]any)
	wantArn := map[string]any{"Fn::GetAtt": []any{fnID, "Arn"}}
	for _, key := range []string{"AskGuardFunctionArn", "AgentMessageFunctionArn", "AskRunFunctionArn"} {
		if got, _ := json.Marshal(subs[key]); string(got) != mustJSON(wantArn) {
			t.Errorf("substitution %s = %s, want the function's ARN %s", key, got, mustJSON(wantArn))
		}
	}
	logging, _ := p["LoggingConfiguration"].(map[string]any)
	if logging["Level"] != "ERROR" || logging["IncludeExecutionData"] != false || logging["Destinations"] == nil {
		t.Errorf("LoggingConfiguration %v, want level ERROR to a log group without execution data", logging)
	}

	// The machine may invoke its function; the function may start the machine.
	roleRef := props(sm)["RoleArn"].(map[string]any)["Fn::GetAtt"].([]any)[0].(string)
	var smActions, fnActions []string
	for _, pol := range resources(js, "AWS::IAM::Policy") {
		pp := props(pol)
		roles, _ := json.Marshal(pp["Roles"])
		doc, _ := json.Marshal(pp["PolicyDocument"])
		if strings.Contains(string(roles), roleRef) && strings.Contains(string(doc), "lambda:InvokeFunction") {
			smActions = append(smActions, "lambda:InvokeFunction")
			if !strings.Contains(string(doc), fnID) {
				t.Errorf("the machine's invoke grant is not on the function: %s", doc)
			}
		}
		if strings.Contains(string(doc), "stateMachine:${AWS::StackName}-ask-agent") {
			for _, a := range []string{"states:StartExecution", "states:StartSyncExecution"} {
				if strings.Contains(string(doc), a) {
					fnActions = append(fnActions, a)
				}
			}
		}
	}
	if len(smActions) == 0 {
		t.Error("the machine's role has no lambda:InvokeFunction grant")
	}
	slices.Sort(fnActions)
	if !slices.Equal(slices.Compact(fnActions), []string{"states:StartExecution", "states:StartSyncExecution"}) {
		t.Errorf("start grants on the machine: %v", fnActions)
	}
	_, fn := byConstruct(t, js, "AWS::Lambda::Function", "AFunction")
	env, _ := json.Marshal(props(fn)["Environment"])
	if !strings.Contains(string(env), `"`+deploy.StateMachineEnvVar("ask-agent")+`":{"Fn::Sub":"`+deploy.StateMachineARNSub("ask-agent")+`"}`) {
		t.Errorf("function environment %s lacks %s = the machine's ARN", env, deploy.StateMachineEnvVar("ask-agent"))
	}

	// Its caller waits for every execution (StartSyncExecution) and gets
	// each failure: no alarm for it.
	for _, a := range resources(js, "AWS::CloudWatch::Alarm") {
		dims, _ := json.Marshal(props(a)["Dimensions"])
		if props(a)["MetricName"] == "ExecutionsFailed" && strings.Contains(string(dims), deploy.LogicalID("ask-agent", "StateMachine")) {
			t.Errorf("an alarm on the ask-agent machine's failed executions: %s", dims)
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// onlyLogDelivery says whether a statement's actions are all Step Functions
// log-delivery actions (deploy.StateMachineLogActions).
func onlyLogDelivery(actions any) bool {
	for _, a := range asList(actions) {
		if !slices.Contains(deploy.StateMachineLogActions, a.(string)) {
			return false
		}
	}
	return true
}

// TestCatalogueStateMachines checks least privilege on the real stack:
// each machine may invoke exactly the functions its placeholders name,
// each function may start, resume and stop exactly the machines that list
// it, and each machine started asynchronously has an alarm on failed
// executions (one started only synchronously hands its failures to its
// caller).
func TestCatalogueStateMachines(t *testing.T) {
	_, js := synth(t)
	for _, m := range deploy.StateMachines {
		_, sm := byConstruct(t, js, "AWS::StepFunctions::StateMachine", deploy.LogicalID(m.Name, "StateMachine"))
		role := props(sm)["RoleArn"].(map[string]any)["Fn::GetAtt"].([]any)[0].(string)
		var sts []map[string]any
		for _, pol := range resources(js, "AWS::IAM::Policy") {
			p := props(pol)
			if !slices.ContainsFunc(asList(p["Roles"]), func(r any) bool { return mustJSON(r) == mustJSON(map[string]any{"Ref": role}) }) {
				continue
			}
			for _, st := range p["PolicyDocument"].(map[string]any)["Statement"].([]any) {
				sts = append(sts, st.(map[string]any))
			}
		}
		var want []string
		for _, s := range m.Substitutions {
			want = append(want, idOf(t, js, "AWS::Lambda::Function", deploy.LogicalID(s.Function, "Function")))
		}
		slices.Sort(want)
		if got := invokeTargets(t, js, withActionPrefix(t, sts, "lambda:")); !slices.Equal(got, slices.Compact(want)) {
			t.Errorf("machine %s may invoke %v, want exactly %v", m.Name, got, slices.Compact(want))
		}
		var alarm bool
		for _, a := range resources(js, "AWS::CloudWatch::Alarm") {
			dims, _ := json.Marshal(props(a)["Dimensions"])
			alarm = alarm || (props(a)["MetricName"] == "ExecutionsFailed" && strings.Contains(string(dims), deploy.LogicalID(m.Name, "StateMachine")))
		}
		if alarm != deploy.HasFailedAlarm(m) {
			t.Errorf("machine %s: alarm on failed executions %v, want %v (only machines started asynchronously have one)", m.Name, alarm, deploy.HasFailedAlarm(m))
		}
	}
	for _, f := range deploy.Functions {
		var want []string
		for _, m := range deploy.StateMachines {
			if slices.Contains(m.StartedBy, f.Name) {
				want = append(want, subs(deploy.StateMachineActions, deploy.StateMachineARNSub(m.Name))...)
			}
			if slices.Contains(m.ResumedBy, f.Name) {
				want = append(want, subs(deploy.StateMachineTokenActions, deploy.StateMachineARNSub(m.Name))...)
			}
			if slices.Contains(m.StoppedBy, f.Name) {
				want = append(want, subs(deploy.StateMachineStopActions, deploy.StateMachineExecutionsARNSub(m.Name))...)
			}
		}
		slices.Sort(want)
		got := grantPairs(t, withActionPrefix(t, roleStatements(t, js, f.Name), "states:"))
		if !slices.Equal(got, want) {
			t.Errorf("function %s may %v, want exactly %v", f.Name, got, want)
		}
	}
}
