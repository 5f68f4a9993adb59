package decide

import (
	"context"

	"github.com/switchboard-dev/switchboard/shared/adapters/sfntoken"
	"github.com/switchboard-dev/switchboard/shared/app/internal/core"
)

// TaskTokens resume and fail the executions that wait for an approval (the
// document pipeline's public links). The client is built per call: the dev
// runtime points AWS_ENDPOINT_URL_SFN at its local service after this
// part is built, and a decision is rare.
type TaskTokens struct{ Core *core.Core }

func (t TaskTokens) client(ctx context.Context) *sfntoken.Client {
	return sfntoken.New(t.Core.StepFunctionsConfig(ctx), t.Core.Getenv)
}

// Succeed implements approvals.TaskTokens.
func (t TaskTokens) Succeed(ctx context.Context, token, output string) error {
	return t.client(ctx).Succeed(ctx, token, output)
}

// Fail implements approvals.TaskTokens.
func (t TaskTokens) Fail(ctx context.Context, token, errName, cause string) error {
	return t.client(ctx).Fail(ctx, token, errName, cause)
}
