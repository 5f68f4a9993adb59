// Package act builds the functions that act without running a model:
// tools and jobs. They share the core and the actions layer (the
// workspace bucket, the tool executor with every tool, approvals, the
// scheduled jobs); no model provider is linked into them.
package act

import (
	"context"

	"github.com/switchboard-dev/switchboard/shared/app/internal/actions"
	"github.com/switchboard-dev/switchboard/shared/app/internal/core"
	"github.com/switchboard-dev/switchboard/shared/app/internal/decide"
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/httpapi"
)

func build(ctx context.Context, fn string, getenv func(string) string) (*actions.Actions, error) {
	c, err := core.New(ctx, getenv)
	if err != nil {
		return nil, err
	}
	if c.Dispatcher == nil {
		c.Dispatcher = core.NoDispatcher{Function: fn}
	}
	d, err := decide.New(c)
	if err != nil {
		return nil, err
	}
	return actions.New(d)
}

// Tools serves the tools function URL (AuthType AWS_IAM; RequireIAM makes
// a misconfigured URL fail closed), the ask-agent machine's guard and
// record Tasks and the document pipeline's steps (payloads with an op).
func Tools(ctx context.Context, getenv func(string) string) (any, error) {
	a, err := build(ctx, "tools", getenv)
	if err != nil {
		return nil, err
	}
	url, err := handlers.URL("tools", httpapi.RequireIAM(a.ToolsHandler()), a.Log, a.Scrubber)
	if err != nil {
		return nil, err
	}
	return handlers.URLWithTasks(url, a.ToolsTasks()), nil
}

// Jobs runs the job an EventBridge schedule names.
func Jobs(ctx context.Context, getenv func(string) string) (any, error) {
	a, err := build(ctx, "jobs", getenv)
	if err != nil {
		return nil, err
	}
	r, err := a.Jobs()
	if err != nil {
		return nil, err
	}
	return handlers.Jobs(r), nil
}
