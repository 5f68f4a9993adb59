package wake_test

import (
	"context"
	"strings"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/agentrun"
)

// Funcs as the worker's and the replier's ports, for tests that script one
// answer.
type (
	prepareFunc  func(ctx context.Context, job sb.WakeJob) (sb.WakeJob, bool, error)
	runFunc      func(ctx context.Context, job sb.WakeJob) (agentrun.Result, error)
	executeFunc  func(ctx context.Context, approvalID string) error
	replyFunc    func(ctx context.Context, job sb.WakeJob, run sb.RunContext, text string) error
	attachFunc   func(ctx context.Context, job sb.WakeJob, run sb.RunContext, text, caption string) error
	fallbackFunc func(ctx context.Context, job sb.WakeJob, text string) error
	sendFunc     func(ctx context.Context, m sb.TelegramText) error
	notifyFunc   func(ctx context.Context, agentID, text string) error
)

func (f prepareFunc) PrepareJob(ctx context.Context, job sb.WakeJob) (sb.WakeJob, bool, error) {
	return f(ctx, job)
}

func (f runFunc) RunJob(ctx context.Context, job sb.WakeJob) (agentrun.Result, error) {
	return f(ctx, job)
}

func (f executeFunc) Execute(ctx context.Context, approvalID string) error { return f(ctx, approvalID) }

func (f replyFunc) Reply(ctx context.Context, job sb.WakeJob, run sb.RunContext, text string) error {
	return f(ctx, job, run, text)
}

func (f attachFunc) Attach(ctx context.Context, job sb.WakeJob, run sb.RunContext, text, caption string) error {
	return f(ctx, job, run, text, caption)
}

func (f fallbackFunc) Fallback(ctx context.Context, job sb.WakeJob, text string) error {
	return f(ctx, job, text)
}

func (f sendFunc) SendLongWait(ctx context.Context, m sb.TelegramText, _ sb.TelegramWait) ([]sb.TelegramSent, error) {
	return nil, f(ctx, m)
}

func (f notifyFunc) NotifyHuman(ctx context.Context, agentID, text string) error {
	return f(ctx, agentID, text)
}

// agentIDs names every agent by its id.
type agentIDs struct{}

func (agentIDs) AgentName(id string) string { return id }

// replaceScrubber masks one word, as a scrubber would mask a secret.
type replaceScrubber struct{ secret, mask string }

func (s replaceScrubber) String(text string) string {
	return strings.ReplaceAll(text, s.secret, s.mask)
}

func (s replaceScrubber) StringContext(_ context.Context, text string) string { return s.String(text) }
