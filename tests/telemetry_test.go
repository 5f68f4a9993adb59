package tests

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/switchboard-dev/switchboard/shared/adapters/collabora/cofake"
	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/dynamotest"
	"github.com/switchboard-dev/switchboard/shared/adapters/nextcloud/ncfake"
	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat/rcfake"
	"github.com/switchboard-dev/switchboard/shared/adapters/spantable/spancodec"
)

// jaegerConfig keeps traces in memory and binds every port to 127.0.0.1
// (Jaeger's defaults listen on all interfaces): the OTLP/HTTP receiver and
// the query API (HTTP and gRPC), nothing else.
const jaegerConfig = `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
extensions:
  jaeger_query:
    storage:
      traces: mem
    http:
      endpoint: %s
    grpc:
      endpoint: %s
  jaeger_storage:
    backends:
      mem:
        memory:
          max_traces: 1000
receivers:
  otlp:
    protocols:
      http:
        endpoint: %s
processors:
  batch:
exporters:
  jaeger_storage_exporter:
    trace_storage: mem
`

// startJaeger runs the Jaeger that scripts/jaeger.sh built (or
// SWITCHBOARD_JAEGER names) and returns its OTLP/HTTP and query base URLs.
// Without a built binary the test is skipped, unless
// SWITCHBOARD_REQUIRE_JAEGER=1 (then it fails).
func startJaeger(t *testing.T) (otlp, query string) {
	t.Helper()
	out, err := exec.Command("../scripts/jaeger.sh", "--cached").Output()
	bin := strings.TrimSpace(string(out))
	if err != nil || bin == "" {
		if os.Getenv("SWITCHBOARD_REQUIRE_JAEGER") == "1" {
			t.Fatalf("no Jaeger binary (%v); run scripts/jaeger.sh once", err)
		}
		t.Skip("no Jaeger binary; run scripts/jaeger.sh once (about 5 minutes) or set SWITCHBOARD_JAEGER")
	}
	otlpAddr, httpAddr, grpcAddr := freeAddr(t), freeAddr(t), freeAddr(t)
	cfg := filepath.Join(t.TempDir(), "jaeger.yaml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, jaegerConfig, httpAddr, grpcAddr, otlpAddr), 0o600); err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	cmd := exec.Command(bin, "--config=file:"+cfg)
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		// Jaeger does not always exit promptly on SIGTERM: a bounded wait,
		// then SIGKILL.
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("jaeger output:\n%s", logs.String())
		}
	})
	query = "http://" + httpAddr
	if !eventually(30*time.Second, func() bool {
		resp, err := http.Get(query + "/api/services")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}) {
		t.Fatalf("jaeger did not answer on %s:\n%s", query, logs.String())
	}
	return "http://" + otlpAddr, query
}

// countingProxy forwards OTLP requests to target and counts their bytes.
func countingProxy(t *testing.T, target string) (string, *atomic.Int64, *atomic.Int64) {
	t.Helper()
	u, _ := url.Parse(target)
	rp := httputil.NewSingleHostReverseProxy(u)
	var bytesIn, requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		bytesIn.Add(int64(len(body)))
		requests.Add(1)
		r.Body = io.NopCloser(bytes.NewReader(body))
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &bytesIn, &requests
}

// jaegerSpan is a span as Jaeger's query API (GET /api/traces/{id}) shows it.
type jaegerSpan struct {
	SpanID        string `json:"spanID"`
	OperationName string `json:"operationName"`
	References    []struct {
		RefType string `json:"refType"`
		SpanID  string `json:"spanID"`
	} `json:"references"`
	Tags []struct {
		Key   string `json:"key"`
		Value any    `json:"value"`
	} `json:"tags"`
}

func (s jaegerSpan) tag(key string) any {
	for _, t := range s.Tags {
		if t.Key == key {
			return t.Value
		}
	}
	return nil
}

func (s jaegerSpan) parent() string {
	for _, r := range s.References {
		if r.RefType == "CHILD_OF" {
			return r.SpanID
		}
	}
	return ""
}

// A Rocket.Chat mention wakes Hermes, who asks Atlas (ask_agent, on the
// local Step Functions runtime) and starts a Documents.deliver; the
// pipeline wakes Hermes again with the result. The whole chain is one
// trace in a real Jaeger, read back through its query API: the wake spans,
// both agents' invoke_agent spans, the chat and execute_tool spans, with
// the expected parents and attributes; a planted secret (in the message
// and in the OTLP header) appears in no span.
func TestChainIsOneTraceInJaeger(t *testing.T) {
	otlp, query := startJaeger(t)
	proxy, exportedBytes, exports := countingProxy(t, otlp)

	rc := rcfake.New()
	t.Cleanup(rc.Close)
	rc.SetRateLimit(0, 0)
	rc.SetWebhookToken(rcWebhookToken)
	rc.AddUser("richard", "user")
	hermesID, hermesToken := rc.AddUser("agent-hermes", "bot", "user")
	room := rc.AddChannel("finanz-team", "richard", "agent-hermes")
	nc := ncfake.Start(t, ncfake.Options{User: "switchboard", Password: "app-pass-e2e-1234"})
	nc.AddUser("richard")
	co := cofake.New(cofake.Options{})
	t.Cleanup(co.Close)

	const planted = "otlp-header-secret-4e1f0b9c"
	config := fmt.Sprintf(`instance:
  name: e2e-otel
  toolApiToken: env:E2E_TOOL_TOKEN
  model: {provider: scripted, reply: "{{agent}} heard: {{message}}", inputPer1M: 3, outputPer1M: 15}
  rocketchat:
    baseUrl: %s
    webhookTokens: [%s]
  askAgent: {timeoutSeconds: 30, maxSteps: 3}
  telemetry:
    captureContent: true
    otlp:
      endpoint: %s
      headers:
        Authorization: env:E2E_OTLP_AUTH
  dev: {scheduler: false, workers: 2}
agents:
  - id: hermes
    name: Hermes
    tools:
      ask_agent: {agents: [atlas]}
      Workspace: {}
      RocketChat:
        userId: %s
        authToken: %s
        username: agent-hermes
        allowedRooms: [finanz-team]
        defaultRoom: finanz-team
      Nextcloud:
        baseUrl: %s
        username: switchboard
        appPassword: app-pass-e2e-1234
        rootPath: /Switchboard/Hermes
        collaboraUrl: %s
  - id: atlas
    name: Atlas
    tools:
      Workspace: {}
`, rc.URL, rcWebhookToken, proxy, hermesID, hermesToken, nc.URL, co.URL)
	path := filepath.Join(t.TempDir(), "otel.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	// The spans go through the span table, as in AWS; its name is the
	// test's, to read it afterwards.
	spanTable := fmt.Sprintf("e2e-spans-%d", time.Now().UnixNano())
	w := &rcWorld{rc: rc, dev: startDevConfig(t, path, "E2E_OTLP_AUTH="+planted, "SWITCHBOARD_TABLE_SPANS="+spanTable), room: room, agentID: hermesID}
	if _, m := w.dev.invoke("hermes", "Workspace", "write", map[string]any{"path": "personal:q3.csv", "content": "region,revenue\nnorth,10\n"}); m["status"] != "ok" {
		t.Fatalf("workspace write = %v", m)
	}

	m, err := rc.Post("richard", room, "@agent-hermes ask Atlas, then send richard the Q3 numbers (the header is "+planted+")\n"+
		`call ask_agent.ask {"agent":"atlas","question":"how many trucks are on the road?"}`+"\n"+
		`call Documents.deliver {"localPath":"personal:q3.csv","format":"xlsx","share":{"with":"richard"},"room":"finanz-team","message":"Q3 numbers for richard"}`,
		rcfake.PostOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if status, body := w.deliver(t, m); status != http.StatusOK {
		t.Fatalf("webhook = %d %s", status, body)
	}
	w.waitForReply(t, room, "Documents.deliver → ok")
	w.waitForReply(t, room, "Hermes heard: Document delivery")
	w.dev.idle()

	ids := regexp.MustCompile(`"msg":"ask_agent: answered".*?"rootRunId":"([0-9a-f]+)"`).FindStringSubmatch(w.dev.logs.String())
	if ids == nil {
		t.Fatalf("no ask_agent answer in the log")
	}
	root := ids[1]
	sum := sha256.Sum256([]byte("switchboard trace " + root))
	traceID := hex.EncodeToString(sum[:16])

	// Five runs' worth of spans: two wakes and two runs of Hermes, Atlas's
	// run, and their chat and tool calls.
	var spans []jaegerSpan
	var raw []byte
	if !eventually(20*time.Second, func() bool {
		resp, err := http.Get(query + "/api/traces/" + traceID)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		raw, _ = io.ReadAll(resp.Body)
		var body struct {
			Data []struct {
				Spans []jaegerSpan `json:"spans"`
			} `json:"data"`
		}
		if json.Unmarshal(raw, &body) != nil || len(body.Data) != 1 {
			return false
		}
		spans = body.Data[0].Spans
		return count(spans, "invoke_agent hermes") == 2 && count(spans, "invoke_agent atlas") == 1 && count(spans, "wake hermes") == 2 &&
			count(spans, "pipeline Documents.deliver") == 1
	}) {
		t.Fatalf("trace %s (root run %s) in Jaeger: %d spans %v, want both Hermes runs, Atlas's and two wakes", traceID, root, len(spans), spanNames(spans))
	}
	byID := map[string]jaegerSpan{}
	for _, s := range spans {
		byID[s.SpanID] = s
	}
	parentName := func(s jaegerSpan) string { return byID[s.parent()].OperationName }

	var hermesRoot jaegerSpan
	for _, s := range spans {
		if s.OperationName == "invoke_agent hermes" && s.tag("switchboard.run.id") == root {
			hermesRoot = s
		}
	}
	if hermesRoot.SpanID == "" || parentName(hermesRoot) != "wake hermes" || byID[hermesRoot.parent()].parent() != "" {
		t.Fatalf("Hermes's first run %+v, want it under the first wake, the trace's root", hermesRoot)
	}
	for _, s := range spans {
		switch {
		case s.OperationName == "execute_tool ask_agent.ask", s.OperationName == "execute_tool Documents.deliver":
			if s.parent() != hermesRoot.SpanID || s.tag("switchboard.tool.status") != "ok" || s.tag("switchboard.tool.staging") != "auto" {
				t.Errorf("%s: parent %s status %v staging %v, want under Hermes's first run, ok, auto", s.OperationName, parentName(s),
					s.tag("switchboard.tool.status"), s.tag("switchboard.tool.staging"))
			}
		case s.OperationName == "pipeline Documents.deliver":
			// The delivery's execution, recorded by its finish step in
			// another invocation, under the run that started it.
			if s.parent() != hermesRoot.SpanID || s.tag("switchboard.outcome") != "delivered" {
				t.Errorf("pipeline span: parent %s outcome %v, want under Hermes's first run, delivered", parentName(s), s.tag("switchboard.outcome"))
			}
		case strings.HasPrefix(s.OperationName, "step "):
			if parentName(s) != "pipeline Documents.deliver" || s.tag("switchboard.outcome") != "ok" || s.tag("switchboard.pipeline.attempt") == nil {
				t.Errorf("%s: parent %s outcome %v, want under the pipeline span, ok, with its attempt", s.OperationName, parentName(s), s.tag("switchboard.outcome"))
			}
		case s.OperationName == "invoke_agent atlas":
			// Across the state machine, under the asking tool call: its
			// span id travels in the machine's input.
			if ask := byID[s.parent()]; ask.OperationName != "execute_tool ask_agent.ask" || ask.parent() != hermesRoot.SpanID || s.tag("gen_ai.conversation.id") != root {
				t.Errorf("Atlas's run: parent %s conversation %v, want under Hermes's ask_agent.ask call in the chain %s", parentName(s), s.tag("gen_ai.conversation.id"), root)
			}
		case strings.HasPrefix(s.OperationName, "chat "):
			if !strings.HasPrefix(parentName(s), "invoke_agent ") || s.tag("gen_ai.request.model") == nil || s.tag("gen_ai.usage.input_tokens") == nil {
				t.Errorf("%s: parent %s tags %v, want under a run with model and tokens", s.OperationName, parentName(s), s.Tags)
			}
		case s.OperationName == "invoke_agent hermes" && s.SpanID != hermesRoot.SpanID:
			// The follow-up run the pipeline woke: under its wake, which
			// hangs under the run that started the delivery.
			if wake := byID[s.parent()]; wake.OperationName != "wake hermes" || wake.parent() != hermesRoot.SpanID {
				t.Errorf("follow-up run (parent run %v) under %s (itself under %q), want a wake under Hermes's first run", s.tag("switchboard.run.parent_id"), wake.OperationName, parentName(wake))
			}
		}
		if s.OperationName == "invoke_agent hermes" || s.OperationName == "invoke_agent atlas" {
			if c, _ := s.tag("gen_ai.usage.cost").(float64); c <= 0 || s.tag("gen_ai.agent.name") == nil || s.tag("switchboard.outcome") != "answered" {
				t.Errorf("%s tags %v, want a cost, the agent and the outcome", s.OperationName, s.Tags)
			}
		}
	}
	for _, step := range []string{"step convert", "step upload", "step share", "step post", "step finish"} {
		if n := count(spans, step); n != 1 {
			t.Errorf("%d %q spans, want 1 (all: %v)", n, step, spanNames(spans))
		}
	}
	if strings.Contains(string(raw), planted) {
		t.Errorf("the planted secret is in the trace:\n%s", raw)
	}
	if !strings.Contains(string(raw), "gen_ai.input.messages") {
		t.Errorf("captureContent is on, but no span carries the messages")
	}
	items, fromTable, itemBytes := spanTableItems(t, spanTable, traceID)
	if fromTable < len(spans) {
		t.Errorf("the span table holds %d spans of the trace in %d items, want every one of the %d in Jaeger (they go through it)", fromTable, items, len(spans))
	}
	t.Logf("measured: %d spans in the chain's trace (%v); %d OTLP requests, %d bytes exported for %d runs (%d bytes per run); "+
		"%d span-table items, %d bytes of payload (%d per item)",
		len(spans), spanNames(spans), exports.Load(), exportedBytes.Load(), 3, exportedBytes.Load()/3, items, itemBytes, itemBytes/max(items, 1))
}

// spanTableItems scans the dev's span table: how many items, how many
// spans of trace they hold, and their payload bytes.
func spanTableItems(t *testing.T, table, trace string) (items, spans, bytes int) {
	t.Helper()
	c := dynamotest.SDKClient(t)
	out, err := c.Scan(t.Context(), &dynamodb.ScanInput{TableName: &table})
	if err != nil {
		t.Fatalf("scan the span table %s: %v", table, err)
	}
	for _, it := range out.Items {
		p, ok := it[spancodec.PayloadAttr].(*types.AttributeValueMemberB)
		if !ok {
			t.Fatalf("span table item without its payload: %v", it)
		}
		decoded, err := spancodec.Decode(p.Value)
		if err != nil {
			t.Fatal(err)
		}
		items++
		bytes += len(p.Value)
		for _, s := range decoded {
			if s.Trace.String() == trace {
				spans++
			}
		}
	}
	return items, spans, bytes
}

func count(spans []jaegerSpan, name string) int {
	n := 0
	for _, s := range spans {
		if s.OperationName == name {
			n++
		}
	}
	return n
}

func spanNames(spans []jaegerSpan) map[string]int {
	out := map[string]int{}
	for _, s := range spans {
		out[s.OperationName]++
	}
	return out
}
