package deploy

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// SAM naming shared with infra/ so that both templates use the same words.
const (
	// SAMCodeRoot is where `make build` leaves each function's folder with
	// its bootstrap; SAM's CodeUri points at <SAMCodeRoot>/<name>/.
	SAMCodeRoot = "build/functions"
	// ConfigFileName is the value of SWITCHBOARD_CONFIG in AWS: the config
	// file sits next to bootstrap in the function's package (/var/task).
	ConfigFileName = "config.yaml"
	// BucketLogicalID names the workspace bucket resource.
	BucketLogicalID = "WorkspaceBucket"
	// BuildTags are the build tags of a function binary (the Makefile's
	// LAMBDA_TAGS): aws-lambda-go without its RPC mode, and gRPC without
	// golang.org/x/net/trace, whose html/template and text/template keep
	// every method of every linked type.
	BuildTags = "lambda.norpc,grpcnotrace"
)

// LogicalID turns a catalogue name ("rocketchat-poll") plus a kind ("Job")
// into a CloudFormation logical id ("RocketchatPollJob"). Logical ids allow
// only letters and digits.
func LogicalID(name, kind string) string {
	var b strings.Builder
	upper := true
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z':
			if upper {
				r -= 'a' - 'A'
			}
			b.WriteRune(r)
			upper = false
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			b.WriteRune(r)
			upper = false
		default:
			upper = true
		}
	}
	return b.String() + kind
}

// IAM resources as CloudFormation Fn::Sub strings, so that the CDK app and
// template.yaml grant exactly the same thing.
const (
	// SecretsResource covers every secret named SecretNamePrefix…; Secrets
	// Manager appends "-XXXXXX" to the name in the ARN, which the * covers.
	SecretsResource = "arn:${AWS::Partition}:secretsmanager:${AWS::Region}:${AWS::AccountId}:secret:" + SecretNamePrefix + "*"
	// ModelResource: foundation models in any region, because a
	// cross-region inference profile routes the call to the model in
	// another region and IAM checks the model ARN there too.
	ModelResource = "arn:${AWS::Partition}:bedrock:*::foundation-model/*"
	// InferenceProfileResource: the (system or application) inference
	// profiles of this account and region.
	InferenceProfileResource = "arn:${AWS::Partition}:bedrock:${AWS::Region}:${AWS::AccountId}:inference-profile/*"
	// AsyncMaxEventAgeSeconds is how long Lambda keeps retrying an async
	// event before it drops it.
	AsyncMaxEventAgeSeconds = 6 * 60 * 60
)

// Actions granted next to the resources above.
var (
	SecretActions = []string{"secretsmanager:GetSecretValue"}
	ModelActions  = []string{"bedrock:InvokeModel", "bedrock:InvokeModelWithResponseStream"}
)

// Secret is a Secrets Manager secret the stack creates. Its name is the
// stack's secret prefix (SecretNamePrefix unless changed, see
// CheckSecretPrefix) followed by Name, so the GetSecretValue grant on
// SecretsResource covers it. Both templates keep it on stack deletion
// (Retain): it holds a key or a token nobody can recreate.
//
// Fixed physical names have consequences an operator must know:
//   - two stacks in one account and region need different secret prefixes
//     (CDK secretPrefix, SAM parameter SecretPrefix), or the second fails
//     with "already exists";
//   - a retained secret also blocks redeploying a deleted stack under the
//     same prefix: delete it first (aws secretsmanager delete-secret
//     --force-delete-without-recovery) or use another prefix;
//   - changing the prefix of a deployed stack replaces the secrets: new,
//     empty ones under the new names, the old ones are kept but no longer
//     managed.
//
// CloudFormation writes a new secret version only when GenerateSecretString
// or SecretString changes in the template: editing the generation settings
// rotates the signing key (links already sent stop working), editing the
// placeholder overwrites the token the operator stored. For a JSON secret
// that new version replaces the whole object, keys written since included
// (agents' tokens from provision-agent): never change its keys or template
// on a deployed stack.
type Secret struct {
	Name string // after the prefix: "instance"
	// Purpose goes into the secret's description: what it is for.
	Purpose string
	// A plain secret (no Keys) is one value: ConfigKey is the config value
	// that refers to it, GenerateLength > 0 makes CloudFormation generate it
	// (that many letters and digits, no punctuation, so it survives shells
	// and YAML unquoted), Placeholder is the initial value of one the
	// operator fills in with put-secret-value. The placeholder is in the
	// template in clear text, so it must be no secret, and it must not pass
	// for a real value.
	ConfigKey      string
	GenerateLength int
	Placeholder    string
	// Keys makes the secret one JSON object, one key per value, which the
	// config reads as secretsmanager:<name>#<key>. At most one key is
	// generated (CloudFormation generates one value per secret); the others
	// start as placeholders. The operator and provision-agent add more keys.
	Keys []SecretKey
}

// SecretKey is one key of a JSON secret; its fields mean what the plain
// secret's fields of the same name mean.
type SecretKey struct {
	Key            string // "approvalSigningKey"
	ConfigKey      string
	GenerateLength int
	Placeholder    string
}

// SecretValue is how CloudFormation makes a secret's first value: either
// generated (Length characters; for a JSON secret under GenerateKey, inside
// Template, the JSON of the placeholder keys) or the fixed String.
type SecretValue struct {
	Length      int
	GenerateKey string
	Template    string
	String      string
}

// Value says how the secret's first value is made. It panics when the
// catalogue entry is inconsistent (TestSecretsCatalogue keeps it so).
func (s Secret) Value() SecretValue {
	if len(s.Keys) == 0 {
		if (s.GenerateLength > 0) == (s.Placeholder != "") {
			panic(fmt.Sprintf("secret %s in shared/platform/deploy: want either GenerateLength or Placeholder", s.Name))
		}
		return SecretValue{Length: s.GenerateLength, String: s.Placeholder}
	}
	var v SecretValue
	placeholders := map[string]string{}
	for _, k := range s.Keys {
		switch {
		case k.GenerateLength > 0 && k.Placeholder == "" && v.GenerateKey == "":
			v.Length, v.GenerateKey = k.GenerateLength, k.Key
		case k.GenerateLength == 0 && k.Placeholder != "":
			placeholders[k.Key] = k.Placeholder
		default:
			panic(fmt.Sprintf("secret %s key %s in shared/platform/deploy: want either GenerateLength or Placeholder, and at most one generated key", s.Name, k.Key))
		}
	}
	b, _ := json.Marshal(placeholders) // a map of strings always marshals, keys sorted
	if v.GenerateKey == "" {
		v.String = string(b)
	} else {
		v.Template = string(b)
	}
	return v
}

// InstanceSecret is the name (after the prefix) of the one JSON secret that
// holds the instance's values.
const InstanceSecret = "instance"

// Secrets is every secret the stack creates. Each costs $0.40 a month
// whatever it holds, so the instance's values share one JSON secret; the
// console password has its own because CloudFormation generates only one
// value per secret and it must not be the approval signing key.
var Secrets = []Secret{
	{
		Name: InstanceSecret,
		Purpose: "the instance's values as one JSON object: approvalSigningKey (HMAC key of approval links, generated by CloudFormation), " +
			"telegramBotToken (replace the placeholder with the token from @BotFather), and the keys you add: " +
			"agents' Rocket.Chat tokens (switchboard provision-agent --store secretsmanager:<this name>), the tool API token, webhook tokens",
		Keys: []SecretKey{
			{Key: "approvalSigningKey", GenerateLength: 64, ConfigKey: "instance.approvals.signingKey"},
			{Key: "telegramBotToken", Placeholder: "REPLACE_ME with the token from @BotFather", ConfigKey: "instance.telegram.botToken"},
		},
	},
	{
		Name: "console-password", GenerateLength: 32,
		Purpose:   "password of the web console (GET /console/); generated by CloudFormation, read it with aws secretsmanager get-secret-value",
		ConfigKey: "instance.console.password",
	},
}

// LogicalID names the secret's resource: InstanceSecret.
func (s Secret) LogicalID() string { return LogicalID(s.Name, "Secret") }

// Description is the secret's description when it is called name: its
// purpose and the config references to it.
func (s Secret) Description(name string) string {
	if len(s.Keys) == 0 {
		return fmt.Sprintf("Switchboard: %s. The config refers to it as %s: secretsmanager:%s", s.Purpose, s.ConfigKey, name)
	}
	refs := make([]string, len(s.Keys))
	for i, k := range s.Keys {
		refs[i] = fmt.Sprintf("%s: secretsmanager:%s#%s", k.ConfigKey, name, k.Key)
	}
	return fmt.Sprintf("Switchboard: %s. The config refers to its keys as %s", s.Purpose, strings.Join(refs, ", "))
}

// Stack outputs per secret: its ARN and its name.
func (s Secret) ARNOutputID() string  { return LogicalID(s.Name, "SecretArn") }
func (s Secret) NameOutputID() string { return LogicalID(s.Name, "SecretName") }

const (
	// SecretPrefixParameter is the SAM template parameter that carries the
	// secret prefix (CDK: context secretPrefix).
	SecretPrefixParameter = "SecretPrefix"
	// SecretPrefixMaxLength keeps every name well under Secrets Manager's
	// 512 characters.
	SecretPrefixMaxLength = 256
)

// SecretPrefixPattern is what a secret prefix may be: SecretNamePrefix,
// then more characters Secrets Manager allows in names ("switchboard/",
// "switchboard/staging/"), so that the functions' grant still covers it.
var SecretPrefixPattern = "^" + regexp.QuoteMeta(SecretNamePrefix) + `[A-Za-z0-9/_+=.@-]*$`

var secretPrefixRE = regexp.MustCompile(SecretPrefixPattern)

// CheckSecretPrefix explains what is wrong with a secret prefix.
func CheckSecretPrefix(prefix string) error {
	if len(prefix) > SecretPrefixMaxLength || !secretPrefixRE.MatchString(prefix) {
		return fmt.Errorf("secret prefix %q: want %s followed by at most %d letters, digits or /_+=.@- (e.g. %sstaging/), so that the functions may read the secrets",
			prefix, SecretNamePrefix, SecretPrefixMaxLength-len(SecretNamePrefix), SecretNamePrefix)
	}
	return nil
}

// InvokedFunctions returns the names some catalogue function invokes. It
// panics on a target that is not in the catalogue or a function that
// invokes itself (its env var would Ref itself: a template CloudFormation
// rejects).
func InvokedFunctions() map[string]bool {
	invoked := map[string]bool{}
	for _, f := range Functions {
		for _, target := range f.Invokes {
			if _, ok := FunctionByName(target); !ok {
				panic(fmt.Sprintf("function %s invokes unknown function %q in shared/platform/deploy", f.Name, target))
			}
			if target == f.Name {
				panic(fmt.Sprintf("function %s invokes itself in shared/platform/deploy", f.Name))
			}
			invoked[target] = true
		}
	}
	return invoked
}

// ConfiguresAsyncInvoke says whether a function gets an explicit async
// invoke configuration (retries AsyncRetries, max event age
// AsyncMaxEventAgeSeconds): when it sets retries or another function
// invokes it, so that AsyncRetries 0 then really means no retries instead of
// Lambda's default of two. It panics when AsyncRetries is outside 0–2.
func ConfiguresAsyncInvoke(f Function, invoked map[string]bool) bool {
	if f.AsyncRetries < 0 || f.AsyncRetries > 2 {
		panic(fmt.Sprintf("function %s: AsyncRetries %d in shared/platform/deploy, want 0–2", f.Name, f.AsyncRetries))
	}
	return f.AsyncRetries > 0 || invoked[f.Name]
}

// URLOutputID names the stack output that carries a function's URL. It must
// differ from SAM's generated <FunctionId>Url resource.
func URLOutputID(fn string) string { return LogicalID(fn, "URL") }

// FunctionNameOutputID names the stack output that carries a function's
// deployed name. CloudFormation names a function <stack>-<LogicalId>-<random>
// (Switchboard-JobsFunction1A2B3C4D-xYz…), so scripts read the name from this
// output instead of guessing it: jobs → JobsFunctionName.
func FunctionNameOutputID(fn string) string { return LogicalID(fn, "FunctionName") }

// FunctionNameDescription describes the FunctionNameOutputID output.
func FunctionNameDescription(fn string) string {
	return "deployed name of the " + fn + " function (aws lambda invoke --function-name)"
}

// OutputIDs is every stack output both templates give, in template order:
// the bucket's name, each secret's ARN and name, each function URL and each
// function's name.
func OutputIDs() []string {
	ids := []string{BucketLogicalID + "Name"}
	for _, s := range Secrets {
		ids = append(ids, s.ARNOutputID(), s.NameOutputID())
	}
	for _, f := range Functions {
		if f.URLAuth != "" {
			ids = append(ids, URLOutputID(f.Name))
		}
	}
	for _, f := range Functions {
		ids = append(ids, FunctionNameOutputID(f.Name))
	}
	return ids
}

// JobInput is the event a schedule sends to the function that runs a job:
// {"job":"<name>"}.
func JobInput(job string) string {
	b, _ := json.Marshal(map[string]string{"job": job}) // a map of strings always marshals
	return string(b)
}

// SAMTemplate renders template.yaml (AWS SAM) from the catalogue: the same
// tables, bucket, secrets, functions, function URLs, schedules and alarms as
// the CDK app in infra/. Output is deterministic (catalogue order) so a golden test
// can keep the committed file in step. Hand-written YAML keeps this package
// free of dependencies.
func SAMTemplate() []byte {
	w := &samWriter{}
	w.line(0, "# Code generated by `go run ./cmd/gensam` from shared/platform/deploy; DO NOT EDIT.")
	w.line(0, "# The CDK app in infra/ deploys the same catalogue; `make build` fills build/functions/.")
	w.line(0, "AWSTemplateFormatVersion: \"2010-09-09\"")
	w.line(0, "Transform: AWS::Serverless-2016-10-31")
	w.line(0, "Description: Switchboard - LLM agents in Rocket.Chat, Nextcloud and Telegram (SAM view of shared/platform/deploy)")
	w.line(0, "")
	w.parameters()
	w.line(0, "")
	w.line(0, "Resources:")
	for _, t := range Tables {
		w.table(t)
	}
	w.bucket()
	if _, ok := FunctionByName(WakeQueue.Consumer); ok {
		w.queue(WakeQueue)
	}
	for _, s := range Secrets {
		w.secret(s)
	}
	invoked := InvokedFunctions()
	for _, f := range Functions {
		w.function(f, ConfiguresAsyncInvoke(f, invoked))
	}
	for _, f := range Functions {
		if HasErrorAlarm(f) {
			w.alarm(f)
		}
	}
	for _, m := range StateMachines {
		w.stateMachine(m)
	}
	w.outputs()
	return []byte(w.String())
}

type samWriter struct{ strings.Builder }

func (w *samWriter) line(indent int, format string, args ...any) {
	if format == "" {
		w.WriteString("\n")
		return
	}
	w.WriteString(strings.Repeat("  ", indent))
	fmt.Fprintf(w, format, args...)
	w.WriteString("\n")
}

// quote renders any string as a YAML double-quoted scalar; strconv's escapes
// (\", \\, \n, \xNN, \uNNNN) are all valid YAML escapes.
func quote(s string) string { return strconv.Quote(s) }

// singleQuote renders a YAML single-quoted scalar, which keeps JSON readable.
func singleQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func (w *samWriter) table(t Table) {
	w.line(1, "%s:", LogicalID(t.ID, "Table"))
	w.line(2, "# %s", strings.ReplaceAll(t.Doc, "\n", " "))
	w.line(2, "Type: AWS::DynamoDB::Table")
	w.line(2, "DeletionPolicy: Retain")
	w.line(2, "UpdateReplacePolicy: Retain")
	w.line(2, "Properties:")
	w.line(3, "BillingMode: PAY_PER_REQUEST")
	w.line(3, "AttributeDefinitions:")
	for _, a := range tableAttributes(t) {
		w.line(4, "- AttributeName: %s", quote(a.Name))
		w.line(5, "AttributeType: %s", a.Type)
	}
	w.keySchema(3, t.PK, t.SK)
	if len(t.Indexes) > 0 {
		w.line(3, "GlobalSecondaryIndexes:")
		for _, ix := range t.Indexes {
			w.line(4, "- IndexName: %s", quote(ix.Name))
			w.keySchema(5, ix.PK, ix.SK)
			w.line(5, "Projection:")
			if attrs := ix.NonKeyAttributes(t); attrs != nil {
				w.line(6, "ProjectionType: INCLUDE")
				w.line(6, "NonKeyAttributes:")
				for _, a := range attrs {
					w.line(7, "- %s", quote(a))
				}
			} else {
				w.line(6, "ProjectionType: ALL")
			}
		}
	}
	if t.Stream != "" {
		w.line(3, "StreamSpecification:")
		w.line(4, "StreamViewType: %s", t.Stream)
	}
	if t.TTLAttr != "" {
		w.line(3, "TimeToLiveSpecification:")
		w.line(4, "AttributeName: %s", quote(t.TTLAttr))
		w.line(4, "Enabled: true")
	}
	w.line(3, "PointInTimeRecoverySpecification:")
	w.line(4, "PointInTimeRecoveryEnabled: true")
}

func (w *samWriter) keySchema(indent int, pk, sk KeyAttr) {
	w.line(indent, "KeySchema:")
	w.line(indent+1, "- AttributeName: %s", quote(pk.Name))
	w.line(indent+2, "KeyType: HASH")
	if sk.Name != "" {
		w.line(indent+1, "- AttributeName: %s", quote(sk.Name))
		w.line(indent+2, "KeyType: RANGE")
	}
}

// tableAttributes lists every key attribute of the table and its indexes
// once, in first-seen order (CloudFormation rejects duplicates).
func tableAttributes(t Table) []KeyAttr {
	var out []KeyAttr
	seen := map[string]bool{}
	add := func(a KeyAttr) {
		if a.Name != "" && !seen[a.Name] {
			seen[a.Name] = true
			out = append(out, a)
		}
	}
	add(t.PK)
	add(t.SK)
	for _, ix := range t.Indexes {
		add(ix.PK)
		add(ix.SK)
	}
	return out
}

func (w *samWriter) bucket() {
	w.line(1, "%s:", BucketLogicalID)
	w.line(2, "# workspace files and large message bodies; private, encrypted, versioned")
	w.line(2, "Type: AWS::S3::Bucket")
	w.line(2, "DeletionPolicy: Retain")
	w.line(2, "UpdateReplacePolicy: Retain")
	w.line(2, "Properties:")
	w.line(3, "BucketEncryption:")
	w.line(4, "ServerSideEncryptionConfiguration:")
	w.line(5, "- ServerSideEncryptionByDefault:")
	w.line(7, "SSEAlgorithm: AES256")
	w.line(3, "VersioningConfiguration:")
	w.line(4, "Status: Enabled")
	w.line(3, "PublicAccessBlockConfiguration:")
	w.line(4, "BlockPublicAcls: true")
	w.line(4, "BlockPublicPolicy: true")
	w.line(4, "IgnorePublicAcls: true")
	w.line(4, "RestrictPublicBuckets: true")
	w.line(1, "%sPolicy:", BucketLogicalID)
	w.line(2, "# enforceSSL: refuse every request that does not use TLS")
	w.line(2, "Type: AWS::S3::BucketPolicy")
	w.line(2, "Properties:")
	w.line(3, "Bucket: !Ref %s", BucketLogicalID)
	w.line(3, "PolicyDocument:")
	w.line(4, "Version: \"2012-10-17\"")
	w.line(4, "Statement:")
	w.line(5, "- Effect: Deny")
	w.line(6, "Principal:")
	w.line(7, "AWS: \"*\"")
	w.line(6, "Action: s3:*")
	w.line(6, "Resource:")
	w.line(7, "- !GetAtt %s.Arn", BucketLogicalID)
	w.line(7, "- !Sub \"${%s.Arn}/*\"", BucketLogicalID)
	w.line(6, "Condition:")
	w.line(7, "Bool:")
	w.line(8, "aws:SecureTransport: \"false\"")
}

func (w *samWriter) parameters() {
	w.line(0, "Parameters:")
	w.line(1, "%s:", SecretPrefixParameter)
	w.line(2, "Type: String")
	w.line(2, "Default: %s", quote(SecretNamePrefix))
	w.line(2, "AllowedPattern: %s", singleQuote(SecretPrefixPattern))
	w.line(2, "MaxLength: %d", SecretPrefixMaxLength)
	w.line(2, "Description: %s", quote("start of the names of the secrets this stack creates; give a second stack in the same account and region its own, e.g. "+SecretNamePrefix+"staging/"))
	w.line(1, "%s:", LogRetentionParameter)
	w.line(2, "Type: Number")
	w.line(2, "Default: %d", DefaultLogRetentionDays)
	days := make([]string, len(LogRetentionDays))
	for i, d := range LogRetentionDays {
		days[i] = strconv.Itoa(d)
	}
	w.line(2, "AllowedValues: [%s]", strings.Join(days, ", "))
	w.line(2, "Description: %s", quote("days the functions' log groups keep their events (the CDK app reads instance.logRetentionDays)"))
}

// secret writes a secret named ${SecretPrefix}<name>.
func (w *samWriter) secret(s Secret) {
	name := "${" + SecretPrefixParameter + "}" + s.Name
	w.line(1, "%s:", s.LogicalID())
	w.line(2, "Type: AWS::SecretsManager::Secret")
	w.line(2, "DeletionPolicy: Retain")
	w.line(2, "UpdateReplacePolicy: Retain")
	w.line(2, "Properties:")
	w.line(3, "Name: !Sub %s", quote(name))
	w.line(3, "Description: !Sub %s", quote(s.Description(name)))
	v := s.Value()
	if v.Length == 0 && len(s.Keys) == 0 {
		w.line(3, "SecretString: %s", quote(v.String))
		return
	}
	if v.Length == 0 {
		w.line(3, "SecretString: %s", singleQuote(v.String))
		return
	}
	w.line(3, "GenerateSecretString:")
	w.line(4, "PasswordLength: %d", v.Length)
	w.line(4, "ExcludePunctuation: true")
	if v.GenerateKey != "" {
		w.line(4, "GenerateStringKey: %s", v.GenerateKey)
		w.line(4, "SecretStringTemplate: %s", singleQuote(v.Template))
	}
}

func (w *samWriter) function(f Function, asyncConfig bool) {
	id := LogicalID(f.Name, "Function")
	w.line(1, "%s:", LogGroupLogicalID(f.Name))
	w.line(2, "Type: AWS::Logs::LogGroup")
	// Kept on stack deletion, as CDK keeps it; the retention still expires
	// its events.
	w.line(2, "DeletionPolicy: Retain")
	w.line(2, "UpdateReplacePolicy: Retain")
	w.line(2, "Properties:")
	w.line(3, "RetentionInDays: !Ref %s", LogRetentionParameter)
	w.line(1, "%s:", id)
	w.line(2, "Type: AWS::Serverless::Function")
	w.line(2, "Properties:")
	w.line(3, "Description: %s", quote(f.Description))
	w.line(3, "CodeUri: %s/%s/", SAMCodeRoot, f.Name)
	w.line(3, "Handler: bootstrap")
	w.line(3, "Runtime: provided.al2023")
	w.line(3, "Architectures:")
	w.line(4, "- arm64")
	w.line(3, "MemorySize: %d", f.MemoryMB)
	w.line(3, "Timeout: %d", f.TimeoutSeconds)
	w.line(3, "LoggingConfig:")
	w.line(4, "LogGroup: !Ref %s", LogGroupLogicalID(f.Name))
	w.line(3, "Environment:")
	w.line(4, "Variables:")
	for _, t := range Tables {
		w.line(5, "%s: !Ref %s", t.EnvVar, LogicalID(t.ID, "Table"))
	}
	w.line(5, "%s: !Ref %s", EnvBucket, BucketLogicalID)
	w.line(5, "%s: %s", EnvConfig, quote(ConfigFileName))
	if SendsWakes(f) {
		w.line(5, "%s: !Ref %s", EnvWakeQueueURL, WakeQueue.LogicalID())
	}
	for _, target := range f.Invokes {
		if target != WakeQueue.Consumer {
			w.line(5, "%s: !Ref %s", FunctionEnvVar(target), LogicalID(target, "Function"))
		}
	}
	for _, m := range startedBy(f.Name) {
		w.line(5, "%s: !Sub %s", StateMachineEnvVar(m.Name), quote(StateMachineARNSub(m.Name)))
	}
	w.line(3, "Policies:")
	for _, id := range f.Tables {
		w.line(4, "- DynamoDBCrudPolicy:")
		w.line(6, "TableName: !Ref %s", LogicalID(id, "Table"))
	}
	for _, id := range f.ReadTables {
		w.line(4, "- DynamoDBReadPolicy:")
		w.line(6, "TableName: !Ref %s", LogicalID(id, "Table"))
	}
	if f.Bucket {
		w.line(4, "- S3CrudPolicy:")
		w.line(6, "BucketName: !Ref %s", BucketLogicalID)
	}
	if SendsWakes(f) {
		w.line(4, "- SQSSendMessagePolicy:")
		w.line(6, "QueueName: !GetAtt %s.QueueName", WakeQueue.LogicalID())
	}
	for _, target := range f.Invokes {
		if target == WakeQueue.Consumer {
			continue
		}
		w.line(4, "- LambdaInvokePolicy:")
		w.line(6, "FunctionName: !Ref %s", LogicalID(target, "Function"))
	}
	w.line(4, "- Statement:")
	// Config values like secretsmanager:switchboard/rc-token resolve at cold start.
	w.statement(SecretActions, SecretsResource)
	if f.RunsAgents {
		w.statement(ModelActions, ModelResource, InferenceProfileResource)
	}
	w.startGrant(f.Name)
	if f.URLAuth != "" {
		w.line(3, "FunctionUrlConfig:")
		w.line(4, "AuthType: %s", f.URLAuth)
		// The handlers answer through aws-lambda-go's lambdaurl streaming.
		w.line(4, "InvokeMode: RESPONSE_STREAM")
	}
	if asyncConfig {
		w.line(3, "EventInvokeConfig:")
		w.line(4, "MaximumEventAgeInSeconds: %d", AsyncMaxEventAgeSeconds)
		w.line(4, "MaximumRetryAttempts: %d", f.AsyncRetries)
	}
	var jobs []Job
	for _, j := range Jobs {
		if j.Function == f.Name {
			jobs = append(jobs, j)
		}
	}
	if f.Name == WakeQueue.Consumer {
		w.line(3, "Events:")
		w.line(4, "%s:", WakeQueue.LogicalID())
		w.line(5, "Type: SQS")
		w.line(5, "Properties:")
		w.line(6, "Queue: !GetAtt %s.Arn", WakeQueue.LogicalID())
		w.line(6, "BatchSize: 1")
		w.line(6, "FunctionResponseTypes:")
		w.line(7, "- ReportBatchItemFailures")
	}
	if f.Name == SpanStream.Consumer {
		w.line(3, "Events:")
		w.stream(SpanStream)
	}
	if len(jobs) > 0 {
		if f.Name != WakeQueue.Consumer && f.Name != SpanStream.Consumer {
			w.line(3, "Events:")
		}
		for _, j := range jobs {
			w.line(4, "%s:", LogicalID(j.Name, "Job"))
			w.line(5, "Type: Schedule")
			w.line(5, "Properties:")
			w.line(6, "Schedule: %s", quote(j.Schedule))
			w.line(6, "Description: %s", quote(j.Description))
			w.line(6, "Input: %s", singleQuote(JobInput(j.Name)))
			w.line(6, "RetryPolicy:")
			w.line(7, "MaximumRetryAttempts: 2")
		}
	}
}

// stream writes the event source mapping of s: only its INSERTs (the
// TTL's removals never reach the function), batch item failures, bounded
// retries. SAM grants the stream's read actions.
func (w *samWriter) stream(s Stream) {
	w.line(4, "%s:", s.LogicalID())
	w.line(5, "Type: DynamoDB")
	w.line(5, "Properties:")
	w.line(6, "Stream: !GetAtt %s.StreamArn", LogicalID(s.Table, "Table"))
	w.line(6, "StartingPosition: LATEST")
	w.line(6, "BatchSize: %d", s.BatchSize)
	w.line(6, "MaximumRetryAttempts: %d", s.MaxRetries)
	w.line(6, "MaximumRecordAgeInSeconds: %d", s.MaxRecordAgeSeconds)
	w.line(6, "FunctionResponseTypes:")
	w.line(7, "- ReportBatchItemFailures")
	w.line(6, "FilterCriteria:")
	w.line(7, "Filters:")
	w.line(8, "- Pattern: %s", singleQuote(StreamInsertsOnly))
}

// StreamInsertsOnly is the event filter of a stream's mapping: new items
// only.
const StreamInsertsOnly = `{"eventName":["INSERT"]}`

// statement writes one Allow statement of an inline policy; resources are
// Fn::Sub strings.
// queue writes q and its dead-letter queue, both FIFO.
func (w *samWriter) queue(q Queue) {
	w.line(1, "%s:", q.DeadLetterLogicalID())
	w.line(2, "Type: AWS::SQS::Queue")
	w.line(2, "Properties:")
	w.line(3, "FifoQueue: true")
	w.line(3, "MessageRetentionPeriod: %d", DeadLetterRetentionSeconds)
	w.line(3, "SqsManagedSseEnabled: true")
	w.line(1, "%s:", q.LogicalID())
	w.line(2, "Type: AWS::SQS::Queue")
	w.line(2, "Properties:")
	w.line(3, "FifoQueue: true")
	w.line(3, "VisibilityTimeout: %d", q.VisibilitySeconds())
	w.line(3, "SqsManagedSseEnabled: true")
	w.line(3, "RedrivePolicy:")
	w.line(4, "deadLetterTargetArn: !GetAtt %s.Arn", q.DeadLetterLogicalID())
	w.line(4, "maxReceiveCount: %d", q.MaxReceives)
}

func (w *samWriter) statement(actions []string, resources ...string) {
	w.line(6, "- Effect: Allow")
	w.line(7, "Action:")
	for _, a := range actions {
		w.line(8, "- %s", a)
	}
	w.line(7, "Resource:")
	for _, r := range resources {
		w.line(8, "- !Sub %s", quote(r))
	}
}

func (w *samWriter) alarm(f Function) {
	w.sumAlarm(LogicalID(f.Name, "Errors"), "errors in the "+f.Name+" function",
		"AWS/Lambda", "Errors", "FunctionName", LogicalID(f.Name, "Function"))
}

// sumAlarm writes an alarm that fires when the metric's sum over five
// minutes reaches one; no data means nothing went wrong. ref is the logical
// id whose !Ref is the value of the one dimension.
func (w *samWriter) sumAlarm(id, description, namespace, metric, dimension, ref string) {
	w.line(1, "%s:", id)
	w.line(2, "Type: AWS::CloudWatch::Alarm")
	w.line(2, "Properties:")
	w.line(3, "AlarmDescription: %s", quote(description))
	w.line(3, "Namespace: %s", namespace)
	w.line(3, "MetricName: %s", metric)
	w.line(3, "Dimensions:")
	w.line(4, "- Name: %s", dimension)
	w.line(5, "Value: !Ref %s", ref)
	w.line(3, "Statistic: Sum")
	w.line(3, "Period: 300")
	w.line(3, "EvaluationPeriods: 1")
	w.line(3, "Threshold: 1")
	w.line(3, "ComparisonOperator: GreaterThanOrEqualToThreshold")
	w.line(3, "TreatMissingData: notBreaching")
}

func (w *samWriter) outputs() {
	var urls []Function
	for _, f := range Functions {
		if f.URLAuth != "" {
			urls = append(urls, f)
		}
	}
	w.line(0, "")
	w.line(0, "Outputs:")
	w.line(1, "%sName:", BucketLogicalID)
	w.line(2, "Value: !Ref %s", BucketLogicalID)
	for _, s := range Secrets {
		w.line(1, "%s:", s.ARNOutputID())
		w.line(2, "Description: %s", quote("ARN of the "+s.Name+" secret"))
		w.line(2, "Value: !Ref %s", s.LogicalID())
		w.line(1, "%s:", s.NameOutputID())
		w.line(2, "Description: %s", quote("name of the "+s.Name+" secret, for secretsmanager: references in the config"))
		w.line(2, "Value: !Sub %s", quote("${"+SecretPrefixParameter+"}"+s.Name))
	}
	for _, f := range urls {
		id := LogicalID(f.Name, "Function")
		w.line(1, "%s:", URLOutputID(f.Name))
		w.line(2, "Description: %s", quote("function URL of "+f.Name+" (auth "+f.URLAuth+")"))
		// SAM names the generated AWS::Lambda::Url resource <FunctionId>Url.
		w.line(2, "Value: !GetAtt %sUrl.FunctionUrl", id)
	}
	for _, f := range Functions {
		w.line(1, "%s:", FunctionNameOutputID(f.Name))
		w.line(2, "Description: %s", quote(FunctionNameDescription(f.Name)))
		w.line(2, "Value: !Ref %s", LogicalID(f.Name, "Function"))
	}
}
