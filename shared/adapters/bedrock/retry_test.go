package bedrock_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/bedrock"
	"github.com/switchboard-dev/switchboard/shared/adapters/modelretry"
	"github.com/switchboard-dev/switchboard/shared/adapters/modelretry/retrytest"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// oneAttempt turns retries off, for tests of how one answer is mapped.
var oneAttempt = modelretry.Policy{MaxAttempts: 1}

// answerText is a Converse answer with text only.
const answerText = `{"metrics":{"latencyMs":412},"output":{"message":{"role":"assistant","content":[{"text":"Done."}]}},
"stopReason":"end_turn","usage":{"inputTokens":12,"outputTokens":2,"totalTokens":14}}`

var (
	throttled   = wireReply{429, "ThrottlingException", `{"message":"Too many requests, please wait before trying again."}`}
	unavailable = wireReply{503, "ServiceUnavailableException", `{"message":"Service Unavailable"}`}
	internal    = wireReply{500, "InternalServerException", `{"message":"Internal Server Error"}`}
	notReady    = wireReply{429, "ModelNotReadyException", `{"message":"Model is not ready for inference."}`}
	modelSlow   = wireReply{408, "ModelTimeoutException", `{"message":"Model has timed out in processing the request."}`}
	validation  = wireReply{400, "ValidationException", `{"message":"The provided model identifier is invalid."}`}
	denied      = wireReply{403, "AccessDeniedException", `{"message":"You don't have access to the model with the specified model ID."}`}
	answered    = wireReply{200, "", answerText}
)

// TestRetriesOnTheWire runs the provider over the Client against a
// loopback Bedrock: the server must see exactly the attempts of our
// policy (the client itself never retries).
func TestRetriesOnTheWire(t *testing.T) {
	tests := []struct {
		name      string
		replies   []wireReply // then the fixed reply
		last      wireReply
		wantCalls int
		wantWaits string
		wantCode  string // "" means the answer arrives
	}{
		{"throttling then the answer", []wireReply{throttled}, answered, 2, "[1s]", ""},
		{"unavailable, internal, not ready, model timeout then the answer", []wireReply{unavailable, internal, notReady, modelSlow}, answered, 5, "[1s 2s 4s 8s]", ""},
		{"validation is not retried", nil, validation, 1, "[]", sb.EINVALID},
		{"access denied is not retried", nil, denied, 1, "[]", sb.EUNAUTHORIZED},
		{"always throttled gives up after six attempts", nil, throttled, 6, "[1s 2s 4s 8s 16s]", sb.EUNAVAILABLE},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newConverseServer(t, tt.last.status, tt.last.errTyp, tt.last.answer)
			s.before = tt.replies
			clock := retrytest.New()
			m := bedrock.New(wireClient(s.srv), modelID).WithRetry(clock.Policy(modelretry.Default()))
			var rec sb.ModelCallCounter
			got, err := m.Complete(sb.WithModelCallCounter(context.Background(), &rec), sb.ModelRequest{Messages: []sb.ModelMessage{{Role: "user", Content: "hi"}}})
			s.mu.Lock()
			calls := s.calls
			s.mu.Unlock()
			if calls != tt.wantCalls {
				t.Errorf("server got %d calls, want %d", calls, tt.wantCalls)
			}
			if g := fmt.Sprint(clock.Sleeps()); g != tt.wantWaits {
				t.Errorf("waits %s, want %s", g, tt.wantWaits)
			}
			if st := rec.Calls(); st.Attempts != tt.wantCalls {
				t.Errorf("recorded %+v, want %d attempts", st, tt.wantCalls)
			}
			if tt.wantCode == "" {
				if err != nil || got.Text != "Done." {
					t.Fatalf("Complete = %+v, %v; want the answer", got, err)
				}
				return
			}
			checkErr(t, err, tt.wantCode)
		})
	}
}

func TestGivesUpWithAClearErrorOnTheWire(t *testing.T) {
	s := newConverseServer(t, throttled.status, throttled.errTyp, throttled.answer)
	clock := retrytest.New()
	m := bedrock.New(wireClient(s.srv), modelID).WithRetry(clock.Policy(modelretry.Policy{MaxAttempts: 3}))
	_, err := m.Complete(context.Background(), sb.ModelRequest{Messages: []sb.ModelMessage{{Role: "user", Content: "hi"}}})
	checkErr(t, err, sb.EUNAVAILABLE, "the model server is rate limiting after 3 attempts over 3s; try again later", "Bedrock is throttling")
	if clock.Total() != 3*time.Second {
		t.Errorf("waited %v, want 3s", clock.Total())
	}
}
