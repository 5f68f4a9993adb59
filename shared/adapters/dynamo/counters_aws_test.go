package dynamo_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo"
	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
)

// awsLike answers DynamoDB requests the way AWS does where dynalite 4.0.0
// does not: a refused UpdateItem with ReturnValuesOnConditionCheckFailure
// ALL_OLD carries the old item in the error body. Only the requests the
// counter tests send are scripted.
type awsLike struct {
	mu      sync.Mutex
	old     string // the item as AWS JSON, returned with the refusal
	targets []string
	bodies  []map[string]any
}

func (a *awsLike) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	target := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "DynamoDB_20120810.")
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	a.mu.Lock()
	a.targets = append(a.targets, target)
	a.bodies = append(a.bodies, body)
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	switch target {
	case "UpdateItem":
		if body["ReturnValuesOnConditionCheckFailure"] != "ALL_OLD" {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"__type":"com.amazon.coral.validate#ValidationException","message":"the test wants ALL_OLD"}`)
			return
		}
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"__type":"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException",`+
			`"message":"The conditional request failed","Item":`+a.old+`}`)
	case "PutItem":
		io.WriteString(w, `{"ConsumedCapacity":{"TableName":"t","CapacityUnits":1.0}}`)
	default:
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"__type":"com.amazon.coral.validate#ValidationException","message":"unscripted `+target+`"}`)
	}
}

// TestIncrUsesTheOldItemAWSReturns pins the AWS path of Incr that dynalite
// cannot exercise: with the old item in the refusal, a counter at its limit
// costs one request and an expired one two, with no GetItem.
func TestIncrUsesTheOldItemAWSReturns(t *testing.T) {
	now := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		name       string
		expiresAt  time.Time
		wantCount  int
		wantOK     bool
		wantCalls  []string
		wantPutExp string
	}{
		{"at the limit", now.Add(time.Minute), 3, false, []string{"UpdateItem"}, ""},
		{"expired", now.Add(-time.Second), 1, true, []string{"UpdateItem", "PutItem"}, "1773482400"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := &awsLike{old: `{"pk":{"S":"counter#k"},"sk":{"S":"-"},"n":{"N":"3"},"expiresAt":{"N":"` +
				strconv.FormatInt(tt.expiresAt.Unix(), 10) + `"}}`}
			hs := httptest.NewServer(srv)
			t.Cleanup(hs.Close)
			c := dynamo.NewClientFromConfig(t.Context(), aws.Config{
				Region:       "us-east-1",
				Credentials:  credentials.NewStaticCredentialsProvider("x", "y", ""),
				BaseEndpoint: aws.String(hs.URL),
			})
			c.MaxAttempts = 1
			s := dynamo.New(c, func(k string) string {
				if k == deploy.EnvTablePrefix {
					return "aws-"
				}
				return ""
			})
			s.Now = func() time.Time { return now }

			n, ok, err := s.Incr(t.Context(), "k", 3, now.Add(time.Hour))
			if err != nil || n != tt.wantCount || ok != tt.wantOK {
				t.Fatalf("Incr = %d, %v, %v; want %d, %v", n, ok, err, tt.wantCount, tt.wantOK)
			}
			if !slices.Equal(srv.targets, tt.wantCalls) {
				t.Errorf("requests %v, want %v", srv.targets, tt.wantCalls)
			}
			if got := s.Stats().Ops["counters.incr"].Calls; got != int64(len(tt.wantCalls)) {
				t.Errorf("Stats counted %d calls, want %d", got, len(tt.wantCalls))
			}
			if tt.wantPutExp != "" {
				put := srv.bodies[len(srv.bodies)-1]
				item, _ := put["Item"].(map[string]any)
				if got := item["expiresAt"]; !jsonEqual(got, map[string]any{"N": tt.wantPutExp}) ||
					!jsonEqual(item["n"], map[string]any{"N": "1"}) || put["ConditionExpression"] != "expiresAt < :now" {
					t.Errorf("restart PutItem %v, want n 1, expiresAt %s, conditioned on expiresAt < :now", put, tt.wantPutExp)
				}
			}
		})
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
