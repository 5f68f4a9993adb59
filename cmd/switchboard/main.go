// Command switchboard is the operator CLI: `dev` runs the whole system
// locally, `run-job` runs a scheduled job now, `invoke` runs a Lambda handler
// on a sample event, `check-config` validates a config for AWS or dev,
// `version` prints the build.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"sort"
	"syscall"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/switchboard-dev/switchboard/shared/app"
	"github.com/switchboard-dev/switchboard/shared/devrt"
	swcfg "github.com/switchboard-dev/switchboard/shared/platform/config"
	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
	"github.com/switchboard-dev/switchboard/shared/usecases/jobs"
)

const usage = `usage: switchboard <command> [flags]

The config is --config F, else $SWITCHBOARD_CONFIG, else switchboard.yaml in
the working directory when it exists, else switchboard.example.yaml. Beside a
running dev (the one using --data DIR, default .data) the other verbs use its
DynamoDB, S3, sandbox and listener, wherever its ports were moved.

commands:
  dev [--config F] [--addr HOST:PORT] [--data DIR] [--s3-addr HOST:PORT]
                         run Switchboard locally (make dev starts dynalite first)
  run-job <name> [--dry-run] [--config F] [--data DIR]
                         run a scheduled job now (heartbeat, …)
  invoke --fn NAME --event FILE [--config F] [--data DIR]
                         run a function's Lambda handler on a sample event
  capabilities [--agent ID] [--check a,b] [--config F] [--data DIR]
                         what the agent's Nextcloud offers; --check exits 1 naming what is missing
  provision-agent --username U --email E [--name N] [--store print|secretsmanager|secretsmanager:<json-secret>] [--config F] [--data DIR]
                         create an agent's Rocket.Chat user (roles bot+user) and token
  check-config [--for aws|dev] [--config F]
                         validate a config without reading a secret; aws (the default)
                         also refuses inline secret values (make build and deploy run it)
  version                print the version
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	var ue usageError
	switch {
	case errors.As(err, &ue):
		fmt.Fprintf(os.Stderr, "switchboard: %s\n\n%s", ue, usage)
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "switchboard:", err)
		os.Exit(1)
	}
}

type usageError string

func (e usageError) Error() string { return string(e) }

func run(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 {
		return usageError("a command is required")
	}
	cmd, args := args[0], args[1:]
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	config := fs.String("config", "", "config file (default $SWITCHBOARD_CONFIG, else switchboard.yaml when present, else switchboard.example.yaml)")
	// The verbs beside dev find it through its data directory (dev.json).
	data := fs.String("data", devrt.DefaultDataDir, "local data directory (of the `switchboard dev` to work beside)")
	switch cmd {
	case "dev":
		addr := fs.String("addr", devrt.DefaultAddr, "listen address")
		s3addr := fs.String("s3-addr", devrt.DefaultS3Addr, "in-process S3 listen address (unless AWS_ENDPOINT_URL_S3 is set)")
		if err := parse(fs, args, 0); err != nil {
			return err
		}
		return devrt.Run(ctx, devrt.Options{ConfigPath: *config, Addr: *addr, DataDir: *data, S3Addr: *s3addr}, nil)
	case "run-job":
		dry := fs.Bool("dry-run", false, "only report what the job would change (nextcloud-cleanup)")
		if err := parse(fs, args, 1); err != nil {
			return err
		}
		if *dry {
			ctx = jobs.DryRun(ctx)
		}
		a, closeEnv, err := localApp(ctx, *config, *data)
		if err != nil {
			return err
		}
		defer closeEnv()
		r, err := a.Jobs().Run(ctx, fs.Arg(0), "cli")
		if r.Job == "" { // unknown job: nothing ran
			return err
		}
		if jerr := json.NewEncoder(out).Encode(r); jerr != nil {
			return jerr
		}
		return err
	case "invoke":
		fn := fs.String("fn", "", "function name (functions/<name>)")
		event := fs.String("event", "", "event JSON file (events/<fn>/…)")
		if err := parse(fs, args, 0); err != nil {
			return err
		}
		if *fn == "" || *event == "" {
			return usageError("invoke needs --fn and --event")
		}
		return invoke(ctx, *fn, *event, *config, *data, out)
	case "capabilities":
		agent := fs.String("agent", "", "agent id (default: the first agent with a Nextcloud block)")
		check := fs.String("check", "", "comma-separated features that must be present, e.g. sharing.public,dav.chunking")
		if err := parse(fs, args, 0); err != nil {
			return err
		}
		return capabilities(ctx, *config, *data, *agent, *check, out)
	case "provision-agent":
		username := fs.String("username", "", "the agent's Rocket.Chat username, e.g. agent-hermes")
		name := fs.String("name", "", "display name (default: the username)")
		email := fs.String("email", "", "e-mail address for the user (stored as verified; no mailbox needed)")
		store := fs.String("store", "print", "where the token goes: print (once, locally) or secretsmanager")
		if err := parse(fs, args, 0); err != nil {
			return err
		}
		return provisionAgent(ctx, *config, *data, *username, *name, *email, *store, out)
	case "check-config":
		target := fs.String("for", string(swcfg.ForAWS), "where the config will run: aws or dev")
		if err := parse(fs, args, 0); err != nil {
			return err
		}
		return checkConfig(*config, swcfg.Target(*target), out)
	case "version":
		if err := parse(fs, args, 0); err != nil {
			return err
		}
		fmt.Fprintf(out, "switchboard %s (%s)\n", app.Version, runtime.Version())
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(out, usage)
		return nil
	}
	return usageError(fmt.Sprintf("unknown command %q", cmd))
}

func parse(fs *flag.FlagSet, args []string, positional int) error {
	// Allow flags after positional arguments: run-job heartbeat --config x.
	var pos []string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			return usageError(fmt.Sprintf("%s: %v", fs.Name(), err))
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(pos) != positional {
		return usageError(fmt.Sprintf("%s takes %d argument(s), got %d", fs.Name(), positional, len(pos)))
	}
	return fs.Parse(append(append([]string{}, "--"), pos...))
}

// checkConfig validates the config file for target (see config.Check);
// the file is chosen by devrt.ConfigFile.
func checkConfig(path string, target swcfg.Target, out io.Writer) error {
	if target != swcfg.ForAWS && target != swcfg.ForDev {
		return usageError(fmt.Sprintf("check-config: --for %q: use %q or %q", target, swcfg.ForAWS, swcfg.ForDev))
	}
	path = devrt.ConfigFile(path)
	if err := swcfg.Check(path, target); err != nil {
		return err
	}
	_, err := fmt.Fprintf(out, "%s: ok for %s\n", path, target)
	return err
}

// localApp builds the App with the dev defaults (endpoints, tables, bucket),
// so that CLI verbs work beside `make dev` and against AWS alike. Beside a
// running `switchboard dev` (its data directory's dev.json) a verb uses
// that dev's DynamoDB, S3 and sandbox, wherever its ports were moved;
// without one it serves S3 itself on a free port for as long as it runs.
func localApp(ctx context.Context, config, data string) (*app.App, func(), error) {
	opts := devrt.Options{ConfigPath: config, DataDir: data, S3Addr: "127.0.0.1:0"}
	last, ran := devrt.LastRunning(data)
	if ran && last.Answers() {
		opts.Beside = &last
	}
	env, err := devrt.Prepare(ctx, opts)
	if err != nil {
		return nil, nil, err
	}
	// Approval links a verb creates open on the dev listener (the running
	// one, else the default address), unless the config names a public
	// base URL.
	if os.Getenv(app.EnvPublicBaseURL) == "" {
		url := "http://" + devrt.DefaultAddr
		if ran {
			url = last.URL
		}
		_ = os.Setenv(app.EnvPublicBaseURL, url)
	}
	a, err := app.New(ctx, os.Getenv)
	if err != nil {
		env.Close()
		return nil, nil, env.ConfigError(err)
	}
	return a, env.Close, nil
}

// invoke runs the function's handler through lambda.NewHandler(…).Invoke,
// the decode path the Lambda runtime uses.
func invoke(ctx context.Context, fn, eventFile, config, data string, out io.Writer) error {
	if _, ok := deploy.FunctionByName(fn); !ok {
		names := make([]string, 0, len(deploy.Functions))
		for _, f := range deploy.Functions {
			names = append(names, f.Name)
		}
		sort.Strings(names)
		return usageError(fmt.Sprintf("no function %q; functions are %v", fn, names))
	}
	payload, err := os.ReadFile(eventFile)
	if err != nil {
		return fmt.Errorf("invoke: %w", err)
	}
	a, closeEnv, err := localApp(ctx, config, data)
	if err != nil {
		return err
	}
	defer closeEnv()
	h, err := a.Handler(fn)
	if err != nil {
		return err
	}
	resp, err := lambda.NewHandler(h).Invoke(ctx, payload)
	if err != nil {
		return fmt.Errorf("invoke %s: %w", fn, err)
	}
	// A streaming function-URL response is a JSON prelude, 8 NUL bytes, then
	// the body; show them on separate lines.
	if i := bytes.Index(resp, make([]byte, 8)); i >= 0 {
		resp = append(append(resp[:i:i], '\n'), resp[i+8:]...)
	}
	_, err = fmt.Fprintf(out, "%s\n", bytes.TrimSpace(resp))
	return err
}
