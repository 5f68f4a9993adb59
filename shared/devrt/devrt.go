// Package devrt is the local runtime behind `switchboard dev`: it points the
// AWS SDK at local servers unless AWS_ENDPOINT_URL* says otherwise, creates
// the tables (from the deploy catalogue, like infra/) and the bucket, builds
// the same App the Lambdas build, mounts the function routes on one listener,
// and runs the schedules in-process.
package devrt

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/switchboard-dev/switchboard/shared/adapters/awsconfig/awsprofile"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo"
	"github.com/switchboard-dev/switchboard/shared/adapters/s3blob"
	"github.com/switchboard-dev/switchboard/shared/adapters/s3blob/s3fake"
	"github.com/switchboard-dev/switchboard/shared/app"
	"github.com/switchboard-dev/switchboard/shared/devrt/sandbox"
	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
)

// Embedded defaults for local use.
const (
	DefaultAddr      = "127.0.0.1:8080"
	DefaultDynamoDB  = "http://127.0.0.1:8701" // dynalite, started by `make dev` (DYNALITE_PORT moves it)
	DefaultS3Addr    = "127.0.0.1:8702"        // in-process gofakes3
	DefaultBucket    = "switchboard-dev"
	DefaultPrefix    = "switchboard-dev-"
	DefaultDataDir   = ".data"
	EnvDynamoServer  = "SWITCHBOARD_DYNAMODB_SERVER" // e.g. "dynalite 4.0.0", shown by /healthz
	shutdownDeadline = 5 * time.Second
)

// Options for Start.
type Options struct {
	ConfigPath string // "" = ConfigFile's rule
	Addr       string // "" = DefaultAddr
	DataDir    string // "" = DefaultDataDir; S3 data lives under it
	S3Addr     string // "" = DefaultS3Addr; in-process S3 listener
	// Beside, for a CLI verb, is the running `switchboard dev` whose S3,
	// DynamoDB and (for its own config) sandbox config the verb uses.
	Beside *Running
}

// Env is what Prepare decided: endpoints and whether S3 runs in-process.
type Env struct {
	DynamoDB string
	S3       string
	S3Server string // "gofakes3 vX" when in-process, "" otherwise
	// SFN is the Step Functions service; only Run starts it (the CLI verbs
	// beside dev need none).
	SFN *StepFunctions
	// Sandbox is the loopback Rocket.Chat, Telegram and Nextcloud when the
	// config turns it on; only Run starts it.
	Sandbox *sandbox.Sandbox
	stopS3  func()
	// userConfig is the config the user named; configCopy the sandbox's
	// copy of it that the App loads instead ("" when there is none).
	userConfig, configCopy string
}

// Close stops what Prepare started.
func (e *Env) Close() {
	e.Sandbox.Close()
	if e.SFN != nil {
		e.SFN.Close()
	}
	if e.stopS3 != nil {
		e.stopS3()
	}
}

func setDefault(key, value string) {
	if os.Getenv(key) == "" {
		_ = os.Setenv(key, value)
	}
}

// Prepare applies the local defaults to the process environment (the AWS
// SDK reads it: AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL_S3, …), starts
// the in-process S3 server when nothing else is configured, and creates the
// tables and the bucket idempotently.
func Prepare(ctx context.Context, o Options) (*Env, error) {
	if o.DataDir == "" {
		o.DataDir = DefaultDataDir
	}
	if o.S3Addr == "" {
		o.S3Addr = DefaultS3Addr
	}
	env := &Env{userConfig: ConfigFile(o.ConfigPath)}
	config := env.userConfig
	if b := o.Beside; b != nil && b.ConfigFor(config) != config {
		config, env.configCopy = b.Config, b.Config // reach the sandbox servers of that dev
	}
	_ = os.Setenv(deploy.EnvConfig, config)
	if b := o.Beside; b != nil {
		setDefault(deploy.EnvBucket, b.Bucket)
		setDefault(deploy.EnvTablePrefix, b.Tables)
	}
	setDefault(deploy.EnvBucket, DefaultBucket)
	setDefault(deploy.EnvTablePrefix, DefaultPrefix)
	setDefault("AWS_REGION", "us-east-1")
	userDynamo := firstSetKey("AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL")
	userS3 := firstSetKey("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")
	if os.Getenv("AWS_ENDPOINT_URL") == "" {
		if b := o.Beside; b != nil {
			setDefault("AWS_ENDPOINT_URL_DYNAMODB", b.DynamoDB)
			setDefault("AWS_ENDPOINT_URL_S3", b.S3)
		}
		setDefault("AWS_ENDPOINT_URL_DYNAMODB", defaultDynamoDB())
		if os.Getenv("AWS_ENDPOINT_URL_S3") == "" {
			endpoint, stop, err := startS3(o)
			if err != nil {
				return nil, err
			}
			_ = os.Setenv("AWS_ENDPOINT_URL_S3", endpoint)
			env.stopS3, env.S3Server = stop, "gofakes3 "+moduleVersion("github.com/johannesboyne/gofakes3")
		}
	}
	env.DynamoDB = firstSet("AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL")
	env.S3 = firstSet("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")

	awsCfg, err := awsprofile.Load(ctx)
	if err != nil {
		env.Close()
		return nil, err
	}
	dc := dynamo.NewClientFromConfig(ctx, awsCfg)
	if err := dynamo.EnsureTables(ctx, dc, os.Getenv); err != nil {
		env.Close()
		if refused(err) {
			return nil, fmt.Errorf("dev: nothing listens on %s, where DynamoDB is expected; %s", env.DynamoDB, startHint("DynamoDB", userDynamo))
		}
		return nil, fmt.Errorf("dev: tables on %s: %w", env.DynamoDB, err)
	}
	sc := s3blob.NewClientFromConfig(awsCfg)
	if err := s3blob.EnsureBucket(ctx, sc, os.Getenv(deploy.EnvBucket)); err != nil {
		env.Close()
		if refused(err) {
			return nil, fmt.Errorf("dev: nothing listens on %s, where S3 is expected; %s", env.S3, startHint("S3", userS3))
		}
		return nil, fmt.Errorf("dev: bucket on %s: %w", env.S3, err)
	}
	return env, nil
}

// defaultDynamoDB is dynalite where `make dev` starts it: 127.0.0.1 on
// $DYNALITE_PORT (the variable the Makefile and scripts/dynalite.sh use).
func defaultDynamoDB() string {
	if port := os.Getenv("DYNALITE_PORT"); port != "" {
		return "http://127.0.0.1:" + port
	}
	return DefaultDynamoDB
}

// sameFile says whether a and b name the same existing file.
func sameFile(a, b string) bool {
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	return err == nil && os.SameFile(sa, sb)
}

// startS3 runs the in-process S3 on o.S3Addr with data in o.DataDir. Its
// data file admits one process: a second `switchboard dev` (or a CLI verb
// while no dev runs and another holds it) is told who has it.
func startS3(o Options) (string, func(), error) {
	endpoint, stop, err := s3fake.StartFakeAt(o.S3Addr, o.DataDir)
	switch {
	case err == nil:
		return endpoint, stop, nil
	case errors.Is(err, bolt.ErrTimeout):
		holder := ""
		if r, ok := LastRunning(o.DataDir); ok && r.Answers() {
			holder = fmt.Sprintf(" (pid %d, listening on %s)", r.PID, r.URL)
		}
		return "", nil, fmt.Errorf("dev: %s is locked by another `switchboard dev` (make dev) using the data directory %s%s; "+
			"stop that one (Ctrl-C in its terminal), or give this one its own directory: make dev DATA=DIR (switchboard dev --data DIR)",
			filepath.Join(o.DataDir, s3fake.FakeDBFile), o.DataDir, holder)
	case errors.Is(err, syscall.EADDRINUSE):
		return "", nil, fmt.Errorf("dev: in-process S3 on %s: another program listens there; "+
			"move it with make dev S3_ADDR=HOST:PORT (switchboard dev --s3-addr HOST:PORT), or set AWS_ENDPOINT_URL_S3 to an S3 server of yours", o.S3Addr)
	}
	return "", nil, fmt.Errorf("dev: in-process S3 on %s: %w", o.S3Addr, err)
}

// refused reports a connection nobody accepted: waiting does not help,
// something has to be started.
func refused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED)
}

// startHint says what to start for a service nobody serves, given the
// variable the endpoint came from ("" = the dev default).
func startHint(service, key string) string {
	switch key {
	case "AWS_ENDPOINT_URL":
		return "AWS_ENDPOINT_URL points every service there (LocalStack?): start LocalStack with `docker compose -f localstack/docker-compose.yml up -d`, or unset AWS_ENDPOINT_URL to use the local servers"
	case "":
		if service == "DynamoDB" {
			return "start dynalite: run `make dev` (it starts dynalite first), or scripts/dynalite.sh before the command"
		}
		return "start `switchboard dev`, which serves S3 in-process, or set AWS_ENDPOINT_URL_S3"
	}
	return fmt.Sprintf("%s comes from %s: start the %s server there, or unset %s to use the local one", service, key, service, key)
}

// firstSetKey is the first of keys that is set, "" when none is.
func firstSetKey(keys ...string) string {
	for _, k := range keys {
		if os.Getenv(k) != "" {
			return k
		}
	}
	return ""
}

func firstSet(keys ...string) string {
	for _, k := range keys {
		if v := os.Getenv(k); v != "" {
			return v
		}
	}
	return "(AWS default)"
}

// Run starts the dev runtime and blocks until ctx ends, then shuts down.
// ready, when not nil, receives the listening address.
func Run(ctx context.Context, o Options, ready func(addr string)) error {
	if o.Addr == "" {
		o.Addr = DefaultAddr
	}
	if o.DataDir == "" {
		o.DataDir = DefaultDataDir
	}
	env, err := Prepare(ctx, o)
	if err != nil {
		return err
	}
	defer env.Close()
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return fmt.Errorf("dev: listen %s: %w; move it with make dev ADDR=HOST:PORT (switchboard dev --addr HOST:PORT)", o.Addr, err)
	}
	defer ln.Close()
	// Before the App, whose AWS config reads AWS_ENDPOINT_URL_SFN.
	env.SFN = startStepFunctions(ctx, repoRoot())
	env.SFN.devURL = "http://" + ln.Addr().String()
	// Approval links point at this listener unless configured otherwise.
	setDefault(app.EnvPublicBaseURL, "http://"+ln.Addr().String())
	// The sandbox servers start before the App, which loads the config
	// with them filled in.
	if env.Sandbox, err = sandbox.Start(ctx, sandbox.Options{ConfigFile: os.Getenv(deploy.EnvConfig),
		DataDir: o.DataDir, DevURL: "http://" + ln.Addr().String()}); err != nil {
		return err
	}
	if env.Sandbox != nil {
		env.configCopy = env.Sandbox.ConfigFile
		_ = os.Setenv(deploy.EnvConfig, env.Sandbox.ConfigFile)
	}
	a, err := app.New(ctx, os.Getenv)
	if err != nil {
		return env.ConfigError(err)
	}
	if err := env.SFN.required(a.Config()); err != nil {
		return err
	}
	env.SFN.warn(a.Log())
	// Telemetry: runs and wakes write their spans into the span table; a
	// goroutine exports them over OTLP/HTTP from there (spans.go).
	spans, err := startSpanExport(a)
	if err != nil {
		return err
	}
	if err := env.SFN.bind(ctx, a.Handler, deploy.StateMachines); err != nil {
		// A user's server that does not answer stops the start only when
		// a configured feature needs its machines.
		if env.SFN.UserKey == "" || machineFeatures(a.Config()) != nil {
			return err
		}
		a.Log().Warn("switchboard dev: no state machines on the user's Step Functions endpoint; no configured feature needs them",
			"error", err.Error())
	}
	// The functions that start a machine read its ARN from the env var the
	// catalogue names, as in AWS (read per call, so setting it now works).
	for name, arn := range env.SFN.ARNs {
		setDefault(deploy.StateMachineEnvVar(name), arn)
	}
	h, err := Handler(a, env)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	if a.Config().Instance.Dev.Scheduler {
		if err := a.Jobs().Schedule(ctx); err != nil {
			return err
		}
	}
	if sb := env.Sandbox; sb != nil {
		a.Log().Info("sandbox: open http://"+ln.Addr().String()+"/dev/sandbox/ to chat with the agents",
			"rocketchat", sb.Parts.RocketChat, "telegram", sb.Parts.Telegram, "nextcloud", sb.Parts.Nextcloud,
			"config", sb.ConfigFile)
		announceMCP(os.Stderr, "http://"+ln.Addr().String(), a.Config().Instance.MCP.Clients)
		sb.Announce(os.Stderr)
	}
	a.Log().Info("switchboard dev ready", "addr", "http://"+ln.Addr().String(), "config", a.Config().File,
		"dynamodb", env.DynamoDB, "s3", env.S3,
		"stepfunctions", env.SFN.Endpoint, "stepfunctionsServer", env.SFN.Server, "scheduler", a.Config().Instance.Dev.Scheduler)
	if err := writeRunning(o.DataDir, Running{PID: os.Getpid(), URL: "http://" + ln.Addr().String(),
		S3: os.Getenv(firstSetKey("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")), DynamoDB: os.Getenv(firstSetKey("AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL")),
		Tables: os.Getenv(deploy.EnvTablePrefix), Bucket: os.Getenv(deploy.EnvBucket),
		UserConfig: absPath(env.userConfig), Config: absPath(a.Config().File)}); err != nil {
		return err
	}
	defer os.Remove(filepath.Join(o.DataDir, RunningFile))
	if ready != nil {
		ready(ln.Addr().String())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownDeadline)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	a.Close(sctx) // let queued agent runs finish, up to the deadline
	if spans != nil {
		spans.Close(sctx) // the last spans, within the flush bound
	}
	a.Log().Info("switchboard dev stopped")
	return nil
}

// absPath is path made absolute ("" stays "").
func absPath(path string) string {
	if path == "" {
		return ""
	}
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}
