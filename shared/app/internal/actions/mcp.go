package actions

import (
	"net/http"

	"github.com/switchboard-dev/switchboard/shared/httpapi/mcpserver"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/approvals"
)

// MCPHandler serves POST /mcp to the clients of instance.mcp.clients: each
// acts as its agent through the tool executor. Its own bearer check is the
// credential (the function URL has AuthType NONE). version names the
// build in the server's identity.
func (a *Actions) MCPHandler(version string) (http.Handler, error) {
	var clients []mcpserver.Client
	for _, c := range a.Config.Instance.MCP.Clients {
		clients = append(clients, mcpserver.Client{Name: c.Name, Agent: c.Agent, Token: c.Token})
	}
	o := mcpserver.Options{Clients: clients, Tools: a.Tools, Log: a.Log, Version: version}
	if a.Approvals != nil {
		// Without the approvals flow nothing is ever staged, so there is
		// no status to ask for.
		o.Approvals = a.Store.Approvals()
		o.Shown = func(ap sb.Approval) string { return approvals.Describe(ap, a.AgentName(ap.AgentID), a.Scrubber) }
	}
	return mcpserver.New(o)
}
