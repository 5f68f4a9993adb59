package main

import (
	"fmt"
	"path/filepath"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsstepfunctions"
	"github.com/aws/jsii-runtime-go"

	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
)

// RepoRoot is the repository root seen from infra/, where cdk and the
// tests run; catalogue definitions are relative to it.
const RepoRoot = ".."

// newStateMachine deploys one catalogue state machine from its ASL file as
// it is, with its placeholders filled by function ARNs: invoke grants for
// exactly those functions, start grants and the ARN (StateMachineEnvVar)
// for the functions that start it, an execution log without execution data,
// and an alarm on failed executions. It panics on an inconsistent entry.
func newStateMachine(stack awscdk.Stack, m deploy.StateMachine, functions map[string]awslambda.Function) awsstepfunctions.StateMachine {
	if err := deploy.CheckStateMachine(m); err != nil {
		panic(err.Error())
	}
	subs := map[string]*string{}
	for _, s := range m.Substitutions {
		subs[s.Key] = functions[s.Function].FunctionArn()
	}
	id := deploy.LogicalID(m.Name, "StateMachine")
	logs := awslogs.NewLogGroup(stack, jsii.String(id+"Logs"), &awslogs.LogGroupProps{
		Retention: awslogs.RetentionDays_ONE_MONTH,
	})
	if deploy.StateMachineLogRetentionDays != 30 {
		panic(fmt.Sprintf("deploy.StateMachineLogRetentionDays is %d; map it to an awslogs.RetentionDays here", deploy.StateMachineLogRetentionDays))
	}
	sm := awsstepfunctions.NewStateMachine(stack, jsii.String(id), &awsstepfunctions.StateMachineProps{
		StateMachineName:        awscdk.Fn_Sub(jsii.String(deploy.StateMachineNameSub(m.Name)), nil),
		DefinitionBody:          awsstepfunctions.DefinitionBody_FromFile(jsii.String(filepath.Join(RepoRoot, m.Definition)), nil),
		DefinitionSubstitutions: &subs,
		StateMachineType:        awsstepfunctions.StateMachineType(m.Type),
		Logs: &awsstepfunctions.LogOptions{
			Destination:          logs,
			Level:                awsstepfunctions.LogLevel(m.LogLevel),
			IncludeExecutionData: jsii.Bool(false),
		},
	})
	for _, s := range m.Substitutions {
		functions[s.Function].GrantInvoke(sm)
	}
	// By the ARN built from the name, not a Ref: see deploy.StateMachineNameSub.
	for _, name := range m.StartedBy {
		fn := functions[name]
		fn.AddToRolePolicy(allow(deploy.StateMachineActions, deploy.StateMachineARNSub(m.Name)))
		fn.AddEnvironment(jsii.String(deploy.StateMachineEnvVar(m.Name)), awscdk.Fn_Sub(jsii.String(deploy.StateMachineARNSub(m.Name)), nil), nil)
	}
	for _, name := range m.ResumedBy {
		functions[name].AddToRolePolicy(allow(deploy.StateMachineTokenActions, deploy.StateMachineARNSub(m.Name)))
	}
	for _, name := range m.StoppedBy {
		functions[name].AddToRolePolicy(allow(deploy.StateMachineStopActions, deploy.StateMachineExecutionsARNSub(m.Name)))
	}
	if deploy.HasFailedAlarm(m) {
		sm.MetricFailed(&awscloudwatch.MetricOptions{
			Period:    awscdk.Duration_Minutes(jsii.Number(5)),
			Statistic: jsii.String("Sum"),
		}).CreateAlarm(stack, jsii.String(deploy.LogicalID(m.Name, "ExecutionsFailed")), &awscloudwatch.CreateAlarmOptions{
			AlarmDescription:   jsii.String("failed executions of the " + m.Name + " state machine"),
			Threshold:          jsii.Number(1),
			EvaluationPeriods:  jsii.Number(1),
			ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
			TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
		})
	}
	return sm
}
