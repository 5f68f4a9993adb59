package devrt

import (
	"fmt"
	"io"

	swcfg "github.com/switchboard-dev/switchboard/shared/platform/config"
)

// announceMCP prints the MCP endpoint and each client's token in the
// sandbox, so that a desktop client can connect at once. It writes to w,
// not to the log, which masks every secret: the sandbox is a local demo
// whose example tokens are written in its config file.
func announceMCP(w io.Writer, base string, clients []swcfg.MCPClient) {
	if len(clients) == 0 {
		return
	}
	fmt.Fprintf(w, "sandbox: MCP clients connect to %s/mcp (Streamable HTTP) with Authorization: Bearer <token>:\n", base)
	for _, c := range clients {
		fmt.Fprintf(w, "  %s (acts as %s): Bearer %s\n", c.Name, c.Agent, c.Token)
	}
}
