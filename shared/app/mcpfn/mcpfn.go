// Package mcpfn builds the mcp function: the tools function's executor
// behind the MCP endpoint. It is its own builder so that only the mcp
// function (and the dev App) links the MCP SDK; the tools, jobs and
// agent-worker functions share the actions part without it.
package mcpfn

import (
	"context"
	"net/http"

	"github.com/switchboard-dev/switchboard/shared/app/internal/actions"
	"github.com/switchboard-dev/switchboard/shared/app/internal/spans"
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/httpapi/mcpserver"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/approvals"
)

// Build serves the mcp function URL (AuthType NONE: the handler checks each
// client's bearer token) with the same tool executor as the tools function.
func Build(ctx context.Context, getenv func(string) string) (any, error) {
	a, err := actions.ForFunction(ctx, "mcp", getenv)
	if err != nil {
		return nil, err
	}
	rec := spans.Start(a)
	h, err := Handler(a, "")
	if err != nil {
		return nil, err
	}
	url, err := handlers.URL("mcp", h, a.Core.Log, a.Core.Scrubber)
	if err != nil {
		return nil, err
	}
	return spans.Handler(url, rec)
}

// Handler serves POST /mcp to the clients of instance.mcp.clients: each
// acts as its agent through the tool executor. version names the build in
// the server's identity.
func Handler(a *actions.Actions, version string) (http.Handler, error) {
	c := a.Core
	var clients []mcpserver.Client
	for _, cl := range c.Config.Instance.MCP.Clients {
		clients = append(clients, mcpserver.Client{Name: cl.Name, Agent: cl.Agent, Token: cl.Token})
	}
	o := mcpserver.Options{Clients: clients, Tools: a.Tools, Log: c.Log, Version: version}
	if a.Decide.Approvals != nil {
		// Without the approvals flow nothing is ever staged, so there is
		// no status to ask for.
		o.Approvals = c.Store.Approvals()
		o.Shown = func(ap sb.Approval) string { return approvals.Describe(ap, c.AgentName(ap.AgentID), c.Scrubber) }
	}
	return mcpserver.New(o)
}
