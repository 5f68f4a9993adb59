package tests

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/dynamotest"
	"github.com/switchboard-dev/switchboard/shared/adapters/s3blob"
)

// BenchmarkColdStart measures one function binary from exec to "ready": the
// moment it asks the Lambda Runtime API for its first invocation (config
// loaded, secrets resolved, AWS clients and services built). It runs the
// binary built as for Lambda (-tags lambda.norpc -trimpath -ldflags "-s -w"),
// for the host architecture, against a fake Runtime API on loopback.
func BenchmarkColdStart(b *testing.B) {
	for _, fn := range []string{"tools", "jobs"} {
		b.Run(fn, func(b *testing.B) {
			bin := filepath.Join(b.TempDir(), "bootstrap")
			build := exec.Command("go", "build", "-tags", "lambda.norpc", "-trimpath", "-ldflags", "-s -w", "-o", bin, "../functions/"+fn)
			if out, err := build.CombinedOutput(); err != nil {
				b.Fatalf("build: %v\n%s", err, out)
			}
			s3, stop, err := s3blob.StartFake("")
			if err != nil {
				b.Fatal(err)
			}
			defer stop()
			ready := make(chan time.Time, 1)
			api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasSuffix(r.URL.Path, "/invocation/next") {
					select {
					case ready <- time.Now():
					default:
					}
					<-r.Context().Done() // hold the long poll until the process is killed
				}
			}))
			defer api.Close()
			// Lambda sets no AWS_CA_BUNDLE; a machine that does would make
			// every config load parse the whole bundle.
			var base []string
			for _, kv := range os.Environ() {
				if !strings.HasPrefix(kv, "AWS_CA_BUNDLE=") {
					base = append(base, kv)
				}
			}
			env := append(base,
				"AWS_LAMBDA_RUNTIME_API="+strings.TrimPrefix(api.URL, "http://"),
				"AWS_ENDPOINT_URL_DYNAMODB="+dynamotest.Endpoint(b),
				"AWS_ENDPOINT_URL_S3="+s3,
				"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_REGION=us-east-1",
				"SWITCHBOARD_CONFIG=../switchboard.example.yaml", "SWITCHBOARD_BUCKET=bench")
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				cmd := exec.Command(bin)
				cmd.Env = env
				start := time.Now()
				if err := cmd.Start(); err != nil {
					b.Fatal(err)
				}
				select {
				case at := <-ready:
					b.ReportMetric(float64(at.Sub(start).Microseconds())/1000, "ms-to-ready")
				case <-time.After(10 * time.Second):
					b.Fatal("no call to the Runtime API within 10 s")
				}
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
			}
		})
	}
}
