// Package dynamotest gives tests a real DynamoDB API: the endpoint in
// SWITCHBOARD_TEST_DYNAMODB (make test sets it), or else one dynalite process
// per test binary, started on first use from the repository's
// node_modules/.bin/dynalite. Each test gets a fresh, uniquely prefixed
// table set from FreshTables.
//
// A package that calls Client should have
//
//	func TestMain(m *testing.M) { dynamotest.Main(m) }
//
// so the dynalite process is stopped when the tests end. (On Linux the
// process also dies with the test binary, through the parent-death signal.)
package dynamotest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/switchboard-dev/switchboard/shared/adapters/awssigned"
	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo"
	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/ddb"
	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
	"github.com/switchboard-dev/switchboard/shared/platform/noderun"
)

// EnvEndpoint names the variable with the endpoint URL of an already
// running DynamoDB API server; when set, no dynalite is started.
const EnvEndpoint = "SWITCHBOARD_TEST_DYNAMODB"

// startTimeout bounds the wait for dynalite to listen (it takes ~0.3 s).
const startTimeout = 20 * time.Second

var (
	serverMu sync.Mutex
	server   *dynalite
	startErr error

	clientsMu sync.Mutex
	clients   = map[string]*ddb.Client{}
)

// Client returns a client for the test DynamoDB endpoint, starting dynalite
// on first use. It fails the test (never skips it) when dynalite cannot run.
func Client(t testing.TB) *ddb.Client {
	t.Helper()
	endpoint := os.Getenv(EnvEndpoint)
	if endpoint == "" {
		d, err := shared(t)
		if err != nil {
			t.Fatalf("dynamotest: %v", err)
		}
		endpoint = d.endpoint
	}
	clientsMu.Lock()
	defer clientsMu.Unlock()
	c, ok := clients[endpoint]
	if !ok {
		// Built by hand rather than from LoadDefaultConfig so that no
		// AWS_* variable or profile of the developer can redirect tests;
		// without the functions' call limits, as the SDK's client was
		// (three attempts, no deadline of its own).
		c = &ddb.Client{
			Endpoint: endpoint,
			Signer: awssigned.Signer{Service: "dynamodb", Region: "us-east-1",
				Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""), HTTP: awshttp.NewBuildableClient()},
			MaxAttempts: 3,
			Backoff:     dynamo.JitterBackoff{Base: 50 * time.Millisecond, Cap: time.Second}.Delay,
		}
		clients[endpoint] = c
	}
	return c
}

// SDKClient returns the SDK's DynamoDB client for the test endpoint, for
// tests that look at the tables as someone else's code would (a scan, a
// table's description) or write items the stores' client did not.
func SDKClient(t testing.TB) *dynamodb.Client {
	t.Helper()
	return dynamodb.NewFromConfig(aws.Config{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
		BaseEndpoint: aws.String(Endpoint(t)),
	})
}

// Endpoint returns the URL Client connects to (starting dynalite if needed).
func Endpoint(t testing.TB) string {
	t.Helper()
	Client(t)
	if v := os.Getenv(EnvEndpoint); v != "" {
		return v
	}
	d, err := shared(t)
	if err != nil {
		t.Fatalf("dynamotest: %v", err)
	}
	return d.endpoint
}

// shared returns this binary's dynalite, starting it on first use. One that
// exited mid-run (it has crashed under a long suite) is reported with its
// last output in the log of the test that notices, and a new one is
// started for the tests after it; the tests whose tables it held fail.
func shared(t testing.TB) (*dynalite, error) {
	serverMu.Lock()
	defer serverMu.Unlock()
	if server != nil {
		select {
		case <-server.proc.Exited():
			t.Logf("dynamotest: the shared dynalite at %s exited mid-run (%s); starting a new one", server.endpoint, server.output.String())
			server, startErr = nil, nil
		default:
		}
	}
	if server == nil && startErr == nil {
		server, startErr = startDynalite()
	}
	return server, startErr
}

// Main runs the tests and then stops dynalite if this binary started it.
func Main(m *testing.M) {
	code := m.Run()
	Stop()
	os.Exit(code)
}

// Stop kills the dynalite process this binary started, if any. Main calls it.
func Stop() {
	serverMu.Lock()
	defer serverMu.Unlock()
	if server != nil {
		server.stop()
	}
}

// FreshTables creates every catalogued table under a new prefix unique to
// this test and returns a getenv that resolves table names to it (and
// nothing else, so the developer's environment cannot leak in). The tables
// are deleted when the test ends.
func FreshTables(t testing.TB, c *ddb.Client) func(string) string {
	t.Helper()
	prefix := tablePrefix(t.Name())
	getenv := func(key string) string {
		if key == deploy.EnvTablePrefix {
			return prefix
		}
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := dynamo.EnsureTables(ctx, c, getenv); err != nil {
		t.Fatalf("dynamotest: create tables %s*: %v", prefix, err)
	}
	t.Cleanup(func() {
		// t.Context is already cancelled when cleanups run.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for _, tb := range deploy.Tables {
			name := deploy.TableName(tb, getenv)
			if err := c.DeleteTable(ctx, name); err != nil && ddb.Code(err) != ddb.ResourceNotFound {
				t.Errorf("dynamotest: delete table %s: %v", name, err)
			}
		}
	})
	return getenv
}

// tablePrefix makes a valid, unique table-name prefix that still says which
// test owns the tables: [A-Za-z0-9_.-], well under the 255-byte limit.
func tablePrefix(testName string) string {
	clean := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '.', r == '-':
			return r
		}
		return '_'
	}, testName)
	if len(clean) > 80 {
		clean = clean[:80]
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "t-" + clean + "-" + hex.EncodeToString(b[:]) + "-"
}

// dynalite is a running dynalite process.
type dynalite struct {
	endpoint string
	proc     *noderun.Process
	output   *noderun.Tail
}

// startDynalite finds the repository's dynalite, starts it in memory on a
// free loopback port and waits until it answers. A port lost to a race
// between picking and binding is retried.
func startDynalite() (*dynalite, error) {
	root, err := noderun.RepoRoot()
	if err != nil {
		return nil, fmt.Errorf("%w; run the tests inside the repository", err)
	}
	if _, err := os.Stat(filepath.Join(root, "node_modules", "dynalite", "cli.js")); err != nil {
		return nil, fmt.Errorf("dynalite not found in %s/node_modules: run npm ci there (make test does it)", root)
	}
	// The launcher keeps dynalite up when a client aborts a request.
	bin := filepath.Join(root, "scripts", "dynalite.cjs")
	node, err := noderun.Node(root)
	if err != nil {
		return nil, err
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		d, err := launch(node, bin, port)
		if err == nil {
			return d, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

func launch(node, bin string, port int) (*dynalite, error) {
	cmd := exec.Command(node, bin, "--host", "127.0.0.1", "--port", strconv.Itoa(port),
		"--createTableMs", "0", "--deleteTableMs", "0", "--updateTableMs", "0")
	output := &noderun.Tail{Max: 4096}
	cmd.Stdout = output
	cmd.Stderr = output
	proc, err := noderun.Start(cmd)
	if err != nil {
		return nil, fmt.Errorf("start dynalite: %w", err)
	}
	d := &dynalite{endpoint: "http://127.0.0.1:" + strconv.Itoa(port), proc: proc, output: output}

	deadline := time.Now().Add(startTimeout)
	for {
		conn, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 200*time.Millisecond)
		if err == nil {
			conn.Close()
			return d, nil
		}
		select {
		case <-proc.Exited():
			return nil, fmt.Errorf("dynalite exited on start: %s", output.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			d.stop()
			return nil, fmt.Errorf("dynalite did not listen on port %d within %v: %s",
				port, startTimeout, output.String())
		}
	}
}

func (d *dynalite) stop() { d.proc.Stop() }

// freePort asks the kernel for an unused loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
