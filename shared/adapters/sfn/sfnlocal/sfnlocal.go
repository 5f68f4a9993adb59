// Package sfnlocal runs the local Step Functions service: scripts/sfn-local.cjs
// on Node, which executes ASL files in aws-local-stepfunctions (a real ASL
// interpreter) behind the Step Functions JSON API, with Task states calling
// a Lambda Invoke endpoint (lambdalocal) that runs the real handlers. The
// dev runtime and the tests start it here; the Go code then talks to it
// through the ordinary SDK client (shared/adapters/sfn) at Endpoint.
package sfnlocal

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sfnapi "github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/switchboard-dev/switchboard/shared/platform/noderun"
)

// Script is the server, relative to the repository root.
const Script = "scripts/sfn-local.cjs"

// startTimeout bounds the wait for the server to listen (it takes ~0.2 s).
const startTimeout = 20 * time.Second

// Options configures Start.
type Options struct {
	// Root is the repository root (holding scripts/ and node_modules/);
	// empty means the first directory above the working directory with a
	// go.mod.
	Root string
	// LambdaEndpoint is the base URL of the Lambda Invoke endpoint the Task
	// states call (a lambdalocal.Invoker behind an HTTP server).
	LambdaEndpoint string
	// TimeScale multiplies Retry intervals, Wait seconds and heartbeats (not
	// TimeoutSeconds); 0 means 1. Tests use 0.01.
	TimeScale float64
	// Log receives the server's output after it listens (nil: only the
	// last 4 KB are kept, for Output).
	Log io.Writer
}

// Runtime is a running sfn-local process.
type Runtime struct {
	// Endpoint is the URL for AWS_ENDPOINT_URL_SFN: http://127.0.0.1:PORT.
	Endpoint string
	// Started is how long the process took to listen.
	Started time.Duration

	proc *noderun.Process
	tail *noderun.Tail
}

var listening = regexp.MustCompile(`sfn-local: listening on (http://127\.0\.0\.1:\d+)`)

// Start launches the server on a free loopback port and waits until it
// listens. The caller must Stop it. On Linux it also dies with this process.
func Start(ctx context.Context, opts Options) (*Runtime, error) {
	root := opts.Root
	if root == "" {
		var err error
		if root, err = noderun.RepoRoot(); err != nil {
			return nil, fmt.Errorf("sfnlocal: %w; run inside the repository or set Options.Root", err)
		}
	}
	script := filepath.Join(root, Script)
	if _, err := os.Stat(script); err != nil {
		return nil, fmt.Errorf("sfnlocal: %s not found: %w", script, err)
	}
	for _, pkg := range []string{"aws-local-stepfunctions", "asl-validator"} {
		if _, err := os.Stat(filepath.Join(root, "node_modules", pkg)); err != nil {
			return nil, fmt.Errorf("sfnlocal: node_modules/%s is missing: run npm ci in %s (make test does it)", pkg, root)
		}
	}
	node, err := noderun.Node(root)
	if err != nil {
		return nil, fmt.Errorf("sfnlocal: %w", err)
	}
	scale := opts.TimeScale
	if scale == 0 {
		scale = 1
	}
	cmd := exec.Command(node, script)
	cmd.Dir = root
	cmd.Env = append(os.Environ(),
		"SFN_ADDR=127.0.0.1:0",
		"LAMBDA_ENDPOINT="+opts.LambdaEndpoint,
		"SFN_TIME_SCALE="+strconv.FormatFloat(scale, 'g', -1, 64),
		"SFN_MACHINES=",
	)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, fmt.Errorf("sfnlocal: %w", err)
	}
	cmd.Stdout = io.Discard
	t0 := time.Now()
	proc, err := noderun.Start(cmd)
	if err != nil {
		return nil, fmt.Errorf("sfnlocal: start node: %w", err)
	}
	r := &Runtime{proc: proc, tail: &noderun.Tail{Max: 4096}}

	endpoint := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		found := false
		for sc.Scan() {
			line := sc.Text()
			r.tail.Write([]byte(line + "\n"))
			if !found {
				if m := listening.FindStringSubmatch(line); m != nil {
					found = true
					endpoint <- m[1]
					continue
				}
			}
			if found && opts.Log != nil {
				fmt.Fprintln(opts.Log, line)
			}
		}
	}()
	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	select {
	case r.Endpoint = <-endpoint:
		r.Started = time.Since(t0)
		return r, nil
	case <-proc.Exited():
		return nil, fmt.Errorf("sfnlocal: %s exited on start: %s", Script, r.tail.String())
	case <-timer.C:
		r.Stop()
		return nil, fmt.Errorf("sfnlocal: %s did not listen within %v: %s", Script, startTimeout, r.tail.String())
	case <-ctx.Done():
		r.Stop()
		return nil, ctx.Err()
	}
}

// Output is the last 4 KB the server wrote, for error reports.
func (r *Runtime) Output() string { return r.tail.String() }

// Stop kills the process and waits for it (at most 5 s).
func (r *Runtime) Stop() { r.proc.Stop() }

// Machine is one state machine to create: an ASL file with its ${Name}
// placeholders replaced, as CDK's DefinitionSubstitutions do in AWS.
type Machine struct {
	Name          string
	Type          types.StateMachineType // STANDARD or EXPRESS
	File          string
	Substitutions map[string]string
}

// Create creates each machine through the API and returns their ARNs by name.
func Create(ctx context.Context, c *sfnapi.Client, machines ...Machine) (map[string]string, error) {
	arns := map[string]string{}
	for _, m := range machines {
		def, err := Definition(m.File, m.Substitutions)
		if err != nil {
			return nil, err
		}
		out, err := c.CreateStateMachine(ctx, &sfnapi.CreateStateMachineInput{
			Name: aws.String(m.Name), Type: m.Type, Definition: aws.String(def),
			RoleArn: aws.String("arn:aws:iam::000000000000:role/sfn-local"),
		})
		if err != nil {
			return nil, fmt.Errorf("sfnlocal: create state machine %s from %s: %w", m.Name, m.File, err)
		}
		arns[m.Name] = aws.ToString(out.StateMachineArn)
	}
	return arns, nil
}

var placeholder = regexp.MustCompile(`\$\{([A-Za-z0-9_]+)\}`)

// Definition reads an ASL file and replaces its ${Name} placeholders. A
// placeholder without a value is an error, as it is for CloudFormation.
func Definition(file string, subs map[string]string) (string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("sfnlocal: read state machine definition: %w", err)
	}
	var missing []string
	out := placeholder.ReplaceAllStringFunc(string(b), func(m string) string {
		key := m[2 : len(m)-1]
		v, ok := subs[key]
		if !ok {
			missing = append(missing, key)
			return m
		}
		return v
	})
	if missing != nil {
		return "", fmt.Errorf("sfnlocal: %s: no value for %s", file, strings.Join(missing, ", "))
	}
	return out, nil
}

// FunctionARN is the ARN a local Task names for a lambdalocal function;
// lambdalocal takes the name back out of it.
func FunctionARN(name string) string {
	return "arn:aws:lambda:us-east-1:000000000000:function:" + name
}
