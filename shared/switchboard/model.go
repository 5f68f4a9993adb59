package switchboard

import (
	"context"
	"encoding/json"
	"sync"
	"time"
)

// Model is one provider (scripted, OpenAI-compatible, Bedrock Converse).
// Complete returns EUNAVAILABLE/ERATELIMITED for temporary failures.
type Model interface {
	Complete(ctx context.Context, req ModelRequest) (ModelResponse, error)
}

// ModelRequest is what a model sees.
type ModelRequest struct {
	System   string
	Messages []ModelMessage
	Tools    []ToolSpec
}

// ModelResponse is what a model answers: text, tool calls, or both.
type ModelResponse struct {
	Text      string
	ToolCalls []ModelToolCall
	TokensIn  int
	TokensOut int
}

// ModelMessage is one turn of the conversation with the model.
type ModelMessage struct {
	Role       string          `json:"role"` // "user", "assistant", "tool"
	Content    string          `json:"content"`
	ToolCalls  []ModelToolCall `json:"toolCalls,omitempty"`  // assistant turns
	ToolCallID string          `json:"toolCallId,omitempty"` // tool turns
}

// ModelToolCall is a tool call a model asked for.
type ModelToolCall struct {
	ID     string          `json:"id"`
	Tool   string          `json:"tool"`
	Action string          `json:"action"`
	Args   json.RawMessage `json:"args"`
}

// Pricing turns a model's tokens into USD.
type Pricing struct {
	InputPer1M  float64
	OutputPer1M float64
}

// Cost of one exchange.
func (p Pricing) Cost(in, out int) float64 {
	return float64(in)*p.InputPer1M/1e6 + float64(out)*p.OutputPer1M/1e6
}

// Agent is what a run needs to know about the agent it runs.
type Agent struct {
	ID           string
	SystemPrompt string
	MaxSteps     int
	Provider     string
	ModelName    string
	Model        Model
	Pricing      Pricing
}

// ModelCalls counts model attempts: calls made (the first included),
// retries, and the time spent waiting between them.
type ModelCalls struct {
	Attempts int           `json:"attempts"`
	Retries  int           `json:"retries"`
	Waited   time.Duration `json:"waitedNs"`
}

// Add folds o into c.
func (c *ModelCalls) Add(o ModelCalls) {
	c.Attempts += o.Attempts
	c.Retries += o.Retries
	c.Waited += o.Waited
}

// ModelCallCounter sums the ModelCalls of every model call made under one
// context, so a run can say how many attempts and how much waiting it took
// without each provider passing numbers back. Safe for concurrent use; a
// nil counter counts nothing.
type ModelCallCounter struct {
	mu    sync.Mutex
	calls ModelCalls
}

// Calls returns the sums so far.
func (c *ModelCallCounter) Calls() ModelCalls {
	if c == nil {
		return ModelCalls{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls
}

// Add counts o.
func (c *ModelCallCounter) Add(o ModelCalls) {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.calls.Add(o)
	c.mu.Unlock()
}

type modelCallCounterKey struct{}

// WithModelCallCounter returns ctx carrying c.
func WithModelCallCounter(ctx context.Context, c *ModelCallCounter) context.Context {
	return context.WithValue(ctx, modelCallCounterKey{}, c)
}

// ModelCallCounterFrom returns the counter in ctx, or nil.
func ModelCallCounterFrom(ctx context.Context) *ModelCallCounter {
	c, _ := ctx.Value(modelCallCounterKey{}).(*ModelCallCounter)
	return c
}
