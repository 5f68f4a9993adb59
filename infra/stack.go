package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"go.yaml.in/yaml/v3"

	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
)

// DefaultAssetDir is where `make build` leaves <fn>/bootstrap, relative to infra/.
const DefaultAssetDir = "../build/functions"

// SwitchboardStackProps configures the stack.
type SwitchboardStackProps struct {
	awscdk.StackProps
	// AssetDir holds one folder per catalogue function with its bootstrap
	// binary (<AssetDir>/<fn>/bootstrap). Default DefaultAssetDir.
	AssetDir string
	// ConfigFile, when set, is packaged next to every bootstrap as
	// config.yaml, which is where SWITCHBOARD_CONFIG points. When empty the
	// function folders are deployed as they are (a config.yaml inside them
	// is used if present).
	ConfigFile string
	// SecretPrefix starts the names of the secrets the stack creates
	// (deploy.Secrets). Default deploy.SecretNamePrefix ("switchboard/");
	// anything else must start with it too (deploy.CheckSecretPrefix), so
	// the functions' GetSecretValue grant on switchboard/* still covers
	// the secrets. The names are fixed physical names: a second stack in
	// the same account and region needs its own prefix
	// ("switchboard/staging/"), and changing it on a deployed stack
	// replaces the secrets (see deploy.Secret).
	SecretPrefix string
	// LogRetentionDays is how long every function's log group keeps its
	// events; 0 means instance.logRetentionDays of ConfigFile, or
	// deploy.DefaultLogRetentionDays without one. It must be a value
	// CloudWatch Logs offers (deploy.CheckLogRetentionDays).
	LogRetentionDays int
}

// LogRetentionFromConfig reads instance.logRetentionDays from a config
// file; deploy.DefaultLogRetentionDays when the file does not set it. The
// functions validate the whole file at start; this reads only the one key
// the stack needs, and checks it.
func LogRetentionFromConfig(configFile string) (int, error) {
	days := deploy.DefaultLogRetentionDays
	if configFile == "" {
		return days, nil
	}
	raw, err := os.ReadFile(configFile)
	if err != nil {
		return 0, fmt.Errorf("config file %s: %w", configFile, err)
	}
	var doc struct {
		Instance struct {
			LogRetentionDays *int `yaml:"logRetentionDays"`
		} `yaml:"instance"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return 0, fmt.Errorf("config file %s: %w; check it with switchboard check-config --for aws", configFile, err)
	}
	if doc.Instance.LogRetentionDays != nil {
		days = *doc.Instance.LogRetentionDays
	}
	if err := deploy.CheckLogRetentionDays(days); err != nil {
		return 0, fmt.Errorf("config file %s: instance.logRetentionDays: %w", configFile, err)
	}
	return days, nil
}

// logRetention maps days to CDK's names for them.
var logRetention = map[int]awslogs.RetentionDays{
	1: awslogs.RetentionDays_ONE_DAY, 3: awslogs.RetentionDays_THREE_DAYS, 5: awslogs.RetentionDays_FIVE_DAYS,
	7: awslogs.RetentionDays_ONE_WEEK, 14: awslogs.RetentionDays_TWO_WEEKS, 30: awslogs.RetentionDays_ONE_MONTH,
	60: awslogs.RetentionDays_TWO_MONTHS, 90: awslogs.RetentionDays_THREE_MONTHS, 120: awslogs.RetentionDays_FOUR_MONTHS,
	150: awslogs.RetentionDays_FIVE_MONTHS, 180: awslogs.RetentionDays_SIX_MONTHS, 365: awslogs.RetentionDays_ONE_YEAR,
	400: awslogs.RetentionDays_THIRTEEN_MONTHS, 545: awslogs.RetentionDays_EIGHTEEN_MONTHS, 731: awslogs.RetentionDays_TWO_YEARS,
	1096: awslogs.RetentionDays_THREE_YEARS, 1827: awslogs.RetentionDays_FIVE_YEARS, 2192: awslogs.RetentionDays_SIX_YEARS,
	2557: awslogs.RetentionDays_SEVEN_YEARS, 2922: awslogs.RetentionDays_EIGHT_YEARS, 3288: awslogs.RetentionDays_NINE_YEARS,
	3653: awslogs.RetentionDays_TEN_YEARS,
}

// CheckAssets reports, in one message a user can act on, every catalogue
// function whose <assetDir>/<fn>/bootstrap is missing.
func CheckAssets(assetDir string) error {
	if abs, err := filepath.Abs(assetDir); err == nil {
		assetDir = abs
	}
	var missing []error
	for _, f := range deploy.Functions {
		p := filepath.Join(assetDir, f.Name, "bootstrap")
		if st, err := os.Stat(p); err != nil || st.IsDir() {
			missing = append(missing, fmt.Errorf("  %s", p))
		}
	}
	if missing != nil {
		return fmt.Errorf("function assets missing (run `make build` in the repo root first, or pass the folder in SWITCHBOARD_ASSET_DIR):\n%w", errors.Join(missing...))
	}
	return nil
}

// NewSwitchboardStack builds everything shared/platform/deploy describes: tables,
// the workspace bucket, one arm64 provided.al2023 function per catalogue
// function with grants for exactly the tables it lists and the functions it
// invokes (their names in FunctionEnvVar), Bedrock access for functions that
// run agents, the secrets in deploy.Secrets (kept on stack deletion) and
// read access to the switchboard/ secrets for all, async invoke
// settings, function URLs, schedules, error alarms and the state machines
// (newStateMachine). Its outputs are deploy.OutputIDs: the bucket's name,
// the secrets' ARNs and names, the function URLs and every function's
// deployed name. It panics (CDK's own
// convention for construction errors) when a function asset is missing, the
// secret prefix is invalid or the catalogue is inconsistent; main calls
// CheckAssets and deploy.CheckSecretPrefix first to exit with the message
// instead.
func NewSwitchboardStack(scope constructs.Construct, id string, props *SwitchboardStackProps) awscdk.Stack {
	if props == nil {
		props = &SwitchboardStackProps{}
	}
	assetDir := props.AssetDir
	if assetDir == "" {
		assetDir = DefaultAssetDir
	}
	assetDir, err := filepath.Abs(assetDir)
	if err != nil {
		panic(fmt.Sprintf("asset dir %s: %v", props.AssetDir, err))
	}
	if err := CheckAssets(assetDir); err != nil {
		panic(err.Error())
	}
	secretPrefix := props.SecretPrefix
	if secretPrefix == "" {
		secretPrefix = deploy.SecretNamePrefix
	}
	if err := deploy.CheckSecretPrefix(secretPrefix); err != nil {
		panic(err.Error())
	}

	retentionDays := props.LogRetentionDays
	if retentionDays == 0 {
		retentionDays, err = LogRetentionFromConfig(props.ConfigFile)
		if err != nil {
			panic(err.Error())
		}
	}
	retention, ok := logRetention[retentionDays]
	if err := deploy.CheckLogRetentionDays(retentionDays); err != nil || !ok {
		panic(fmt.Sprintf("log retention: %v (or no CDK name for %d days in infra's logRetention)", err, retentionDays))
	}

	stack := awscdk.NewStack(scope, &id, &props.StackProps)

	tables := map[string]awsdynamodb.Table{}
	for _, t := range deploy.Tables {
		tables[t.ID] = newTable(stack, t)
	}

	bucket := awss3.NewBucket(stack, jsii.String(deploy.BucketLogicalID), &awss3.BucketProps{
		BlockPublicAccess: awss3.BlockPublicAccess_BLOCK_ALL(),
		Encryption:        awss3.BucketEncryption_S3_MANAGED,
		EnforceSSL:        jsii.Bool(true),
		Versioned:         jsii.Bool(true),
		RemovalPolicy:     awscdk.RemovalPolicy_RETAIN,
	})
	awscdk.NewCfnOutput(stack, jsii.String(deploy.BucketLogicalID+"Name"), &awscdk.CfnOutputProps{
		Value: bucket.BucketName(),
	})

	for _, s := range deploy.Secrets {
		newSecret(stack, s, secretPrefix+s.Name)
	}

	baseEnv := map[string]*string{
		deploy.EnvBucket: bucket.BucketName(),
		deploy.EnvConfig: jsii.String(deploy.ConfigFileName),
	}
	for _, t := range deploy.Tables {
		baseEnv[t.EnvVar] = tables[t.ID].TableName()
	}
	invoked := deploy.InvokedFunctions() // panics on an unknown target

	functions := map[string]awslambda.Function{}
	for _, f := range deploy.Functions {
		code := filepath.Join(assetDir, f.Name)
		if props.ConfigFile != "" {
			code = stageWithConfig(stack, f.Name, code, props.ConfigFile)
		}
		// One map per function: invokers get their targets' names below.
		env := maps.Clone(baseEnv)
		// A group of its own with a retention (Lambda's default group keeps
		// everything forever); no fixed name, so it never collides with the
		// /aws/lambda/<name> group an earlier deploy left.
		logs := awslogs.NewLogGroup(stack, jsii.String(deploy.LogGroupLogicalID(f.Name)), &awslogs.LogGroupProps{
			Retention: retention,
		})
		fn := awslambda.NewFunction(stack, jsii.String(deploy.LogicalID(f.Name, "Function")), &awslambda.FunctionProps{
			Description:  jsii.String(f.Description),
			Runtime:      awslambda.Runtime_PROVIDED_AL2023(),
			Architecture: awslambda.Architecture_ARM_64(),
			Handler:      jsii.String("bootstrap"),
			Code:         awslambda.Code_FromAsset(jsii.String(code), nil),
			MemorySize:   jsii.Number(float64(f.MemoryMB)),
			Timeout:      awscdk.Duration_Seconds(jsii.Number(float64(f.TimeoutSeconds))),
			Environment:  &env,
			LogGroup:     logs,
		})
		functions[f.Name] = fn
		awscdk.NewCfnOutput(stack, jsii.String(deploy.FunctionNameOutputID(f.Name)), &awscdk.CfnOutputProps{
			Description: jsii.String(deploy.FunctionNameDescription(f.Name)),
			Value:       fn.FunctionName(),
		})

		// Least privilege: data-plane grants (they cover index ARNs) for the
		// listed tables only, and the bucket only when the function uses it.
		for _, tid := range f.Tables {
			t, ok := tables[tid]
			if !ok {
				panic(fmt.Sprintf("function %s lists unknown table %q in shared/platform/deploy", f.Name, tid))
			}
			t.GrantReadWriteData(fn)
		}
		for _, tid := range f.ReadTables {
			t, ok := tables[tid]
			if !ok {
				panic(fmt.Sprintf("function %s lists unknown table %q in shared/platform/deploy", f.Name, tid))
			}
			t.GrantReadData(fn)
		}
		if f.Bucket {
			bucket.GrantReadWrite(fn, nil)
		}
		// Config values like secretsmanager:switchboard/rc-token resolve at cold start.
		fn.AddToRolePolicy(allow(deploy.SecretActions, deploy.SecretsResource))
		if f.RunsAgents {
			fn.AddToRolePolicy(allow(deploy.ModelActions, deploy.ModelResource, deploy.InferenceProfileResource))
		}
		if deploy.ConfiguresAsyncInvoke(f, invoked) {
			fn.ConfigureAsyncInvoke(&awslambda.EventInvokeConfigOptions{
				RetryAttempts: jsii.Number(float64(f.AsyncRetries)),
				MaxEventAge:   awscdk.Duration_Seconds(jsii.Number(deploy.AsyncMaxEventAgeSeconds)),
			})
		}

		if f.URLAuth != "" {
			auth, ok := map[string]awslambda.FunctionUrlAuthType{
				"AWS_IAM": awslambda.FunctionUrlAuthType_AWS_IAM,
				"NONE":    awslambda.FunctionUrlAuthType_NONE,
			}[f.URLAuth]
			if !ok {
				panic(fmt.Sprintf("function %s: URLAuth %q in shared/platform/deploy, want AWS_IAM or NONE", f.Name, f.URLAuth))
			}
			url := fn.AddFunctionUrl(&awslambda.FunctionUrlOptions{
				AuthType: auth,
				// The handlers answer through aws-lambda-go's lambdaurl streaming.
				InvokeMode: awslambda.InvokeMode_RESPONSE_STREAM,
			})
			awscdk.NewCfnOutput(stack, jsii.String(deploy.URLOutputID(f.Name)), &awscdk.CfnOutputProps{
				Description: jsii.String(fmt.Sprintf("function URL of %s (auth %s)", f.Name, f.URLAuth)),
				Value:       url.Url(),
			})
		}

		if !deploy.HasErrorAlarm(f) {
			continue
		}
		fn.MetricErrors(&awscloudwatch.MetricOptions{
			Period:    awscdk.Duration_Minutes(jsii.Number(5)),
			Statistic: jsii.String("Sum"),
		}).CreateAlarm(stack, jsii.String(deploy.LogicalID(f.Name, "Errors")), &awscloudwatch.CreateAlarmOptions{
			AlarmDescription:   jsii.String("errors in the " + f.Name + " function"),
			Threshold:          jsii.Number(1),
			EvaluationPeriods:  jsii.Number(1),
			ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
			TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
		})
	}

	// The wake queue and its consumer; invoke grants and target names once
	// every function exists (the agent-worker's wakes go through the queue).
	var wakes awssqs.Queue
	if consumer, ok := functions[deploy.WakeQueue.Consumer]; ok {
		wakes = newWakeQueue(stack, deploy.WakeQueue)
		consumer.AddEventSource(awslambdaeventsources.NewSqsEventSource(wakes, &awslambdaeventsources.SqsEventSourceProps{
			BatchSize:               jsii.Number(1),
			ReportBatchItemFailures: jsii.Bool(true),
		}))
	}
	// The span table's stream and its consumer (the grant to read the
	// stream comes with the event source).
	if consumer, ok := functions[deploy.SpanStream.Consumer]; ok {
		s := deploy.SpanStream
		consumer.AddEventSource(awslambdaeventsources.NewDynamoEventSource(tables[s.Table], &awslambdaeventsources.DynamoEventSourceProps{
			StartingPosition:        awslambda.StartingPosition_LATEST,
			BatchSize:               jsii.Number(float64(s.BatchSize)),
			RetryAttempts:           jsii.Number(float64(s.MaxRetries)),
			MaxRecordAge:            awscdk.Duration_Seconds(jsii.Number(float64(s.MaxRecordAgeSeconds))),
			ReportBatchItemFailures: jsii.Bool(true),
			Filters: &[]*map[string]any{awslambda.FilterCriteria_Filter(&map[string]any{
				"eventName": awslambda.FilterRule_IsEqual(jsii.String("INSERT")),
			})},
		}))
	}
	for _, f := range deploy.Functions {
		fn := functions[f.Name]
		for _, name := range f.Invokes {
			target, ok := functions[name]
			if !ok {
				panic(fmt.Sprintf("function %s invokes unknown function %q in shared/platform/deploy", f.Name, name))
			}
			if name == deploy.WakeQueue.Consumer {
				continue // through the wake queue, below
			}
			target.GrantInvoke(fn)
			fn.AddEnvironment(jsii.String(deploy.FunctionEnvVar(name)), target.FunctionName(), nil)
		}
		if deploy.SendsWakes(f) && wakes != nil {
			wakes.GrantSendMessages(fn)
			fn.AddEnvironment(jsii.String(deploy.EnvWakeQueueURL), wakes.QueueUrl(), nil)
		}
	}

	for _, m := range deploy.StateMachines {
		newStateMachine(stack, m, functions)
	}

	for _, j := range deploy.Jobs {
		fn, ok := functions[j.Function]
		if !ok {
			panic(fmt.Sprintf("job %s names unknown function %q in shared/platform/deploy", j.Name, j.Function))
		}
		if _, err := deploy.ParseRate(j.Schedule); err != nil {
			panic(fmt.Sprintf("job %s: %v", j.Name, err))
		}
		awsevents.NewRule(stack, jsii.String(deploy.LogicalID(j.Name, "Job")), &awsevents.RuleProps{
			Description: jsii.String(j.Description),
			Schedule:    awsevents.Schedule_Expression(jsii.String(j.Schedule)),
			Targets: &[]awsevents.IRuleTarget{
				awseventstargets.NewLambdaFunction(fn, &awseventstargets.LambdaFunctionProps{
					Event:         awsevents.RuleTargetInput_FromObject(map[string]any{"job": j.Name}),
					RetryAttempts: jsii.Number(2),
				}),
			},
		})
	}

	return stack
}

// newSecret creates one secret of deploy.Secrets under its full name, with
// its ARN and name as stack outputs. Functions get no grant per secret: the
// name starts with deploy.SecretNamePrefix, which their grant covers.
func newSecret(stack awscdk.Stack, s deploy.Secret, name string) awssecretsmanager.Secret {
	props := &awssecretsmanager.SecretProps{
		SecretName:    jsii.String(name),
		Description:   jsii.String(s.Description(name)),
		RemovalPolicy: awscdk.RemovalPolicy_RETAIN,
	}
	// Value panics on an inconsistent catalogue entry.
	switch v := s.Value(); {
	case v.Length > 0:
		props.GenerateSecretString = &awssecretsmanager.SecretStringGenerator{
			PasswordLength:     jsii.Number(float64(v.Length)),
			ExcludePunctuation: jsii.Bool(true),
		}
		if v.GenerateKey != "" {
			// A JSON secret: the generated value goes under GenerateKey,
			// next to the placeholder keys of the template.
			props.GenerateSecretString.GenerateStringKey = jsii.String(v.GenerateKey)
			props.GenerateSecretString.SecretStringTemplate = jsii.String(v.Template)
		}
	default:
		// UnsafePlainText puts the value into the template in clear text,
		// which is what it is for: the placeholder is no secret and only
		// says what to store. The real token never passes through CDK or
		// CloudFormation; the operator writes it with put-secret-value.
		props.SecretStringValue = awscdk.SecretValue_UnsafePlainText(jsii.String(v.String))
	}
	secret := awssecretsmanager.NewSecret(stack, jsii.String(s.LogicalID()), props)
	awscdk.NewCfnOutput(stack, jsii.String(s.ARNOutputID()), &awscdk.CfnOutputProps{
		Description: jsii.String("ARN of the " + s.Name + " secret"),
		Value:       secret.SecretArn(),
	})
	// The name as given, not secret.SecretName(): without the
	// @aws-cdk/aws-secretsmanager:parseOwnedSecretName flag that is parsed
	// from the ARN and keeps Secrets Manager's random suffix.
	awscdk.NewCfnOutput(stack, jsii.String(s.NameOutputID()), &awscdk.CfnOutputProps{
		Description: jsii.String("name of the " + s.Name + " secret, for secretsmanager: references in the config"),
		Value:       jsii.String(name),
	})
	return secret
}

// allow is an Allow statement on CloudFormation Fn::Sub resources, the same
// strings template.yaml uses.
func allow(actions []string, resources ...string) awsiam.PolicyStatement {
	subs := make([]*string, len(resources))
	for i, r := range resources {
		subs[i] = awscdk.Fn_Sub(jsii.String(r), nil)
	}
	return awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings(actions...),
		Resources: &subs,
	})
}

func newTable(scope constructs.Construct, t deploy.Table) awsdynamodb.Table {
	props := &awsdynamodb.TableProps{
		PartitionKey:  attribute(t.PK),
		BillingMode:   awsdynamodb.BillingMode_PAY_PER_REQUEST,
		RemovalPolicy: awscdk.RemovalPolicy_RETAIN,
		PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
			PointInTimeRecoveryEnabled: jsii.Bool(true),
		},
	}
	if t.SK.Name != "" {
		props.SortKey = attribute(t.SK)
	}
	if t.TTLAttr != "" {
		props.TimeToLiveAttribute = jsii.String(t.TTLAttr)
	}
	if t.Stream != "" {
		views := map[string]awsdynamodb.StreamViewType{"NEW_IMAGE": awsdynamodb.StreamViewType_NEW_IMAGE}
		view, ok := views[t.Stream]
		if !ok {
			panic(fmt.Sprintf("table %s: stream %q in shared/platform/deploy, want NEW_IMAGE", t.ID, t.Stream))
		}
		props.Stream = view
	}
	table := awsdynamodb.NewTable(scope, jsii.String(deploy.LogicalID(t.ID, "Table")), props)
	for _, ix := range t.Indexes {
		gsi := &awsdynamodb.GlobalSecondaryIndexProps{
			IndexName:      jsii.String(ix.Name),
			PartitionKey:   attribute(ix.PK),
			ProjectionType: awsdynamodb.ProjectionType_ALL,
		}
		if attrs := ix.NonKeyAttributes(t); attrs != nil {
			gsi.ProjectionType = awsdynamodb.ProjectionType_INCLUDE
			gsi.NonKeyAttributes = jsii.Strings(attrs...)
		}
		if ix.SK.Name != "" {
			gsi.SortKey = attribute(ix.SK)
		}
		table.AddGlobalSecondaryIndex(gsi)
	}
	return table
}

func attribute(a deploy.KeyAttr) *awsdynamodb.Attribute {
	types := map[string]awsdynamodb.AttributeType{
		"S": awsdynamodb.AttributeType_STRING,
		"N": awsdynamodb.AttributeType_NUMBER,
		"B": awsdynamodb.AttributeType_BINARY,
	}
	typ, ok := types[a.Type]
	if !ok {
		panic(fmt.Sprintf("key attribute %s: type %q in shared/platform/deploy, want S, N or B", a.Name, a.Type))
	}
	return &awsdynamodb.Attribute{Name: jsii.String(a.Name), Type: typ}
}

// stageWithConfig copies the function folder and the config file (as
// config.yaml) into the cloud assembly directory, so the asset zip holds both
// and SWITCHBOARD_CONFIG=config.yaml resolves in /var/task. The asset hash
// depends on content only, so staging does not change it between runs.
func stageWithConfig(scope constructs.Construct, fn, codeDir, configFile string) string {
	dir := filepath.Join(*awscdk.Stage_Of(scope).Outdir(), "switchboard-staging", fn)
	if err := stageDir(codeDir, dir, configFile); err != nil {
		panic(fmt.Sprintf("stage function %s with config %s: %v", fn, configFile, err))
	}
	return dir
}

func stageDir(codeDir, dir, configFile string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	err := filepath.WalkDir(codeDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(codeDir, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dir, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return copyFile(path, target, info.Mode().Perm())
	})
	if err != nil {
		return err
	}
	return copyFile(configFile, filepath.Join(dir, deploy.ConfigFileName), 0o644)
}

func copyFile(from, to string, mode fs.FileMode) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return fmt.Errorf("copy %s to %s: %w", from, to, err)
	}
	return dst.Close()
}

// newWakeQueue is the FIFO queue q with its dead-letter queue, both
// encrypted by SQS.
func newWakeQueue(stack awscdk.Stack, q deploy.Queue) awssqs.Queue {
	dlq := awssqs.NewQueue(stack, jsii.String(q.DeadLetterLogicalID()), &awssqs.QueueProps{
		Fifo:            jsii.Bool(true),
		RetentionPeriod: awscdk.Duration_Seconds(jsii.Number(deploy.DeadLetterRetentionSeconds)),
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
	})
	return awssqs.NewQueue(stack, jsii.String(q.LogicalID()), &awssqs.QueueProps{
		Fifo:              jsii.Bool(true),
		VisibilityTimeout: awscdk.Duration_Seconds(jsii.Number(float64(q.VisibilitySeconds()))),
		Encryption:        awssqs.QueueEncryption_SQS_MANAGED,
		DeadLetterQueue:   &awssqs.DeadLetterQueue{Queue: dlq, MaxReceiveCount: jsii.Number(float64(q.MaxReceives))},
	})
}
