package guard_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
)

// Packages no Lambda may link: servers and fakes for dev mode and tests,
// and libraries that cost a Lambda too much.
var devOnly = []string{
	"github.com/johannesboyne/gofakes3", // in-process S3 (s3blob/s3fake)
	"go.etcd.io/bbolt",                  // its file backend
	"gopkg.in/mgo.v2",                   // its bson
	"shared/adapters/s3blob/s3fake",
	"shared/adapters/dynamo/dynamotest",
	"shared/adapters/memstore",
	"shared/adapters/storetest",
	"shared/adapters/rocketchat/rcfake",
	"shared/adapters/nextcloud/ncfake",
	"shared/adapters/telegram/tgfake",
	"shared/adapters/collabora/cofake",
	"shared/devrt",
	"/shared/app\n", // the all-in-one App of dev mode and the CLI
	"testing",
	// The JSON Schema library: tests prove with it that every generated
	// schema is valid JSON Schema and that the executor's own check agrees
	// with it; its package init compiles the drafts' meta-schemas, which
	// cost several milliseconds at every cold start.
	"santhosh-tekuri/jsonschema",
	// The template engines: text/template calls methods by name through
	// reflection, so the linker can no longer drop unused methods anywhere
	// in the binary. Linking html/template made the console's bootstrap
	// 15.5 MB instead of 11.1 MB and its zip 5.34 MB, over the 5 MB limit
	// (a Rocket.Chat receiver that merely links it grows from 10.7 to
	// 15.3 MB). Pages are written with shared/platform/safehtml instead.
	"html/template",
	"text/template",
	// The OpenTelemetry SDK and its OTLP/HTTP exporter bring protobuf, gRPC
	// and grpc-gateway: +3.2 MiB of zip on a small probe binary (1.41 →
	// 4.59 MiB), which no function's budget holds. The functions record
	// spans without it; only the exporting process links it
	// (docs/telemetry.md).
	"go.opentelemetry.io/otel/sdk",
	"shared/adapters/otel",
	"go.opentelemetry.io/proto/otlp",
	// The SDK's config loader: profiles, SSO and STS for the credential
	// chain of a person's machine, about 0.45 MB of every zip. A function
	// builds its config from the Lambda environment
	// (awsconfig.FromEnvironment).
	"github.com/aws/aws-sdk-go-v2/config\n",
	"shared/adapters/awsconfig/awsprofile",
	// The SDK's S3, Secrets Manager, Step Functions and Bedrock Runtime
	// clients: their endpoint rules, types and schemas cost 0.06–0.31 MiB
	// of zip each, and building the schemas ran at every cold start. The
	// functions sign those few calls themselves (s3blob, secrets, sfntoken,
	// bedrock); the SDK clients stay in the dev runtime's Step Functions
	// tests and provision-agent's secret store (secrets/smstore).
	"aws-sdk-go-v2/service/s3",
	"aws-sdk-go-v2/service/secretsmanager",
	"aws-sdk-go-v2/service/sfn",
	"aws-sdk-go-v2/service/bedrockruntime",
	"shared/adapters/sfn\n",
	"shared/adapters/secrets/smstore",
	// The SDK's DynamoDB packages: the client, its types (with the schemas of
	// every operation, built at package init) and attributevalue cost each
	// function about 0.31 MiB of zip, the mcp function the room under 4 MiB.
	// The stores call the API through shared/adapters/dynamo/ddb; the SDK's
	// client stays in the tests that look at the tables past the stores.
	"aws-sdk-go-v2/service/dynamodb",
	"aws-sdk-go-v2/feature/dynamodb",
	// The instance-metadata client and its credentials: a function's
	// credentials are in its environment (awsconfig.FromEnvironment).
	"aws-sdk-go-v2/feature/ec2/imds",
	"aws-sdk-go-v2/credentials/ec2rolecreds",
}

// devOnlyExcept lets a function link what devOnly lists for all others:
// telemetry-export is the one exporting process in AWS, so the only one
// that links the SDK's OTLP exporter (docs/telemetry.md).
var devOnlyExcept = map[string][]string{
	// Not the template engines: the OTLP request types import gRPC, and
	// grpcnotrace (deploy.BuildTags) drops its golang.org/x/net/trace.
	"telemetry-export": {"go.opentelemetry.io/otel/sdk", "shared/adapters/otel", "go.opentelemetry.io/proto/otlp"},
}

// notFor lists what a function does not use and so must not link.
var notFor = map[string][]string{
	// The exporter reads the config and posts spans: no core, no tables
	// of the store, no receivers, tools or models.
	"telemetry-export": {
		"shared/app/internal/", "shared/adapters/dynamo\n", "shared/adapters/rocketchat", "shared/adapters/telegram",
		"shared/adapters/bedrock", "shared/adapters/openai", "shared/adapters/nextcloud", "shared/adapters/s3blob",
		"shared/tools", "shared/usecases/", "shared/httpapi",
	},
	// The Rocket.Chat receiver checks a token, claims the message and
	// invokes the worker: no tools, models, files or Telegram.
	"rocketchat-webhook": {
		"shared/adapters/bedrock", "service/bedrockruntime", "shared/adapters/openai",
		"shared/adapters/nextcloud", "shared/adapters/collabora", "shared/adapters/s3blob",
		"service/s3", "shared/tools",
	},
	// The deciding functions record a decision and hand the approved call
	// to the agent-worker, which runs it: no tool executor, tools, files or
	// models (the router's tool arguments, shared/tools/toolargs, are only
	// declarations).
	"telegram-webhook": decidingNotFor,
	"approvals":        decidingNotFor,
	// The console reads the tables and renders HTML: no tools, models,
	// files or Nextcloud. (It links the Telegram client's package through
	// the one HTTP surface, whose webhook code it never calls; the linker
	// keeps only its package initialisation.)
	"console": {
		"shared/adapters/bedrock", "service/bedrockruntime", "shared/adapters/openai",
		"shared/adapters/nextcloud", "shared/adapters/collabora", "shared/adapters/s3blob",
		"service/s3", "shared/tools",
	},
	"tools": {"shared/adapters/bedrock", "service/bedrockruntime", "shared/adapters/openai"},
	"jobs":  {"shared/adapters/bedrock", "service/bedrockruntime", "shared/adapters/openai"},
	// The worker runs agents and their tools: no scheduled job and no
	// health check. (Like every function it links the Telegram inbound's
	// package through the one HTTP surface, and never calls it.)
	"agent-worker": {"shared/usecases/jobs", "shared/usecases/health"},
	// The MCP function is the tools function behind another transport.
	"mcp": {"shared/adapters/bedrock", "service/bedrockruntime", "shared/adapters/openai"},
}

// TestLambdasLinkOnlyTheirOwnBuilder: each function links its own builder
// package (shared/app/<name>fn) and no other function's, so that a
// builder's choices stay its own. The one exception: the jobs function's
// telegram-poll hands what it fetches to the telegram-webhook's inbound.
func TestLambdasLinkOnlyTheirOwnBuilder(t *testing.T) {
	r := loadRepo(t)
	for _, f := range deploy.Functions {
		t.Run(f.Name, func(t *testing.T) {
			deps := functionDeps(t, r.root, f.Name)
			own := r.module + "/shared/app/" + strings.ReplaceAll(f.Name, "-", "") + "fn"
			allowed := map[string]bool{own: true}
			if f.Name == "jobs" {
				allowed[r.module+"/shared/app/telegramwebhookfn"] = true
			}
			linked := false
			for _, d := range deps {
				if d == own {
					linked = true
				}
				if strings.HasPrefix(d, r.module+"/shared/app/") && strings.HasSuffix(d, "fn") && !allowed[d] {
					t.Errorf("%s links %s, another function's builder", f.Name, d)
				}
			}
			if !linked {
				t.Errorf("%s does not link its builder %s", f.Name, own)
			}
		})
	}
}

// TestMakefileBuildsWithTheGuardedTags: the tests here list what each
// function links with deploy.BuildTags, so make build must use the same.
func TestMakefileBuildsWithTheGuardedTags(t *testing.T) {
	r := loadRepo(t)
	mk, err := os.ReadFile(filepath.Join(r.root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mk), "\nLAMBDA_TAGS := "+deploy.BuildTags+"\n") || !strings.Contains(string(mk), "build -tags $(LAMBDA_TAGS) ") {
		t.Errorf("the Makefile does not build the functions with LAMBDA_TAGS := %s", deploy.BuildTags)
	}
}

// functionDeps lists the packages function fn links, as the Lambda build
// sees them (go list -deps, linux/arm64, deploy.BuildTags).
func functionDeps(t *testing.T, root, fn string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-tags", deploy.BuildTags, "-deps", "./functions/"+fn)
	cmd.Dir = root
	cmd.Env = append(cmd.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// TestLambdasLinkOnlyWhatTheyUse lists each function's dependencies as the
// Lambda build sees them (go list -deps, linux/arm64, deploy.BuildTags) and
// fails on a dev- or test-only package, or on one the function does not use.
func TestLambdasLinkOnlyWhatTheyUse(t *testing.T) {
	r := loadRepo(t)
	for _, f := range deploy.Functions {
		t.Run(f.Name, func(t *testing.T) {
			deps := functionDeps(t, r.root, f.Name)
			t.Logf("%d packages", len(deps))
			for _, d := range deps {
				line := d + "\n" // a "\n" suffix in a pattern matches the whole path's end
				for _, bad := range append(append([]string{}, devOnly...), notFor[f.Name]...) {
					if slices.Contains(devOnlyExcept[f.Name], bad) {
						continue
					}
					if strings.Contains(line, bad) {
						t.Errorf("%s links %s (matches %q)", f.Name, d, strings.TrimSpace(bad))
					}
				}
			}
		})
	}
}

var decidingNotFor = []string{
	"shared/adapters/bedrock", "service/bedrockruntime", "shared/adapters/openai",
	"shared/adapters/nextcloud", "shared/adapters/collabora", "shared/adapters/s3blob", "service/s3",
	"shared/tools\n", "shared/tools/staging", "shared/tools/workspace", "shared/tools/rctool", "shared/tools/nctool",
	"shared/app/internal/actions", "shared/app/internal/agents",
}
