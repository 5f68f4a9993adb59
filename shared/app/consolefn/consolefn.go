// Package consolefn builds the console function: the web console over the
// core's store, reading messages, tasks, audit, receipts, job runs,
// approvals and the health state, and writing only its own sessions and
// login counters (the console table), the operator's pause and stop, and
// StopExecution of a stopped chain's pipeline executions. No tool, model,
// Nextcloud or S3 client is linked.
package consolefn

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo"
	"github.com/switchboard-dev/switchboard/shared/app/internal/core"
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/httpapi/console"
	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/approvals"
)

// Build is the console function's handler.
func Build(ctx context.Context, getenv func(string) string) (any, error) {
	c, err := core.ForFunction(ctx, "console", getenv)
	if err != nil {
		return nil, err
	}
	h, err := Handler(c)
	if err != nil {
		return nil, err
	}
	return handlers.URL("console", h, c.Log, c.Scrubber)
}

// Handler builds the console over an already built core: the console
// function's, or the full App's, which the dev runtime mounts on its
// listener (see shared/app).
func Handler(c *core.Core) (http.Handler, error) {
	in := c.Config.Instance
	own := c.Store.ConsoleState(c.Getenv)
	c.Control().Executions = core.StepFunctionsExecutions{Core: c}
	o := console.Options{
		Password:     in.Console.Password,
		SessionHours: in.Console.SessionHours,
		Reader:       consoleReader{Store: c.Store, AgentMessages: c.Store.AgentMessages(notShown{})},
		Tasks:        c.Store.Tasks(),
		Approvals:    c.Store.Approvals(),
		Allowances:   c.Store.Allowances(),
		Audit:        c.Store,
		Health:       c.Store.KV(),
		HealthKey:    core.RocketChatHealthKey,
		Sessions:     own.KV(),
		Attempts:     own,
		Scrubber:     c.Scrubber,
		Control:      c.Control(),
		Log:          c.Log,
	}
	if key, base := in.Approvals.SigningKey, c.PublicBaseURL(); key != "" && base != "" {
		signer, err := approvals.NewSigner([]byte(key))
		if err != nil {
			return nil, fmt.Errorf("app: config %s: instance.approvals.signingKey: %w", c.Config.File, err)
		}
		o.ApprovalLink = func(a sb.Approval, d string) string {
			return approvals.DecisionLink(base, signer, a, approvals.Decision(d))
		}
	}
	for _, a := range c.Config.Agents {
		o.Agents = append(o.Agents, console.Agent{ID: a.ID, Name: c.AgentName(a.ID), DailyBudgetUSD: a.DailyBudgetUSD})
	}
	for _, j := range deploy.Jobs {
		o.Jobs = append(o.Jobs, console.Job{Name: j.Name, Schedule: j.Schedule, Description: j.Description})
	}
	return console.New(o)
}

// consoleReader joins the store's views into the console's Reader.
type consoleReader struct {
	*dynamo.Store
	*dynamo.AgentMessages
}

// notShown stands in for the workspace bucket, which the console may not
// read: a message too long to stay in its DynamoDB row (over 350 KB) shows
// where it is kept instead of its text.
type notShown struct{}

func (notShown) Get(_ context.Context, key string) (io.ReadCloser, sb.BlobInfo, error) {
	text := "[This message is longer than the console shows; it is kept in the workspace bucket at " + key + ".]"
	return io.NopCloser(strings.NewReader(text)), sb.BlobInfo{Key: key, Size: int64(len(text))}, nil
}

func (notShown) Put(context.Context, string, io.Reader, int64, string) error {
	return sb.E("console.blobs", sb.EFORBIDDEN, "the console writes no files")
}

func (notShown) List(context.Context, string, int) ([]sb.BlobInfo, error) { return nil, nil }

func (notShown) Delete(context.Context, string) error {
	return sb.E("console.blobs", sb.EFORBIDDEN, "the console deletes no files")
}
