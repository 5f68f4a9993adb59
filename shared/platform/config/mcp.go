package config

import (
	"fmt"
	"regexp"
	"sync"
)

// MCP lets Model Context Protocol clients call the agents' tools at
// POST /mcp. Each client acts as one agent.
type MCP struct {
	Clients []MCPClient `yaml:"clients"`
}

// MCPClient is one MCP client: its name (in the audit), the agent it acts
// as, and the bearer token it sends (a secret reference like every other).
type MCPClient struct {
	Name  string `yaml:"name"`
	Agent string `yaml:"agent"`
	Token string `yaml:"token"`
}

// Compiled on first use: the bounded repetition makes it one of the
// costliest expressions to compile, and most configs name no MCP client.
var mcpClientNameRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`) })

// validateMCP checks the client list: unique names, agents that exist,
// a token each and no token twice.
func validateMCP(c *Config, ps *problems) {
	seen := map[string]bool{}
	byToken := map[string]string{} // the references (or inline values) as written
	for i, cl := range c.Instance.MCP.Clients {
		p := indexPath("instance.mcp.clients", i)
		switch {
		case cl.Name == "":
			ps.at(p+".name", "is required", "name the client for the audit, e.g. name: laptop-desktop")
		case !mcpClientNameRe().MatchString(cl.Name):
			ps.at(p+".name", fmt.Sprintf("%q is not a valid client name", shorten(cl.Name)),
				`use up to 63 lower-case letters, digits, ".", "_" and "-", starting with a letter or digit`)
		case seen[cl.Name]:
			ps.at(p+".name", fmt.Sprintf("client %s is listed twice", cl.Name), "give each client its own name and token")
		}
		seen[cl.Name] = true
		switch {
		case cl.Agent == "":
			ps.at(p+".agent", "is required", "give the id of the agent this client acts as")
		case !hasAgent(c, cl.Agent):
			ps.at(p+".agent", fmt.Sprintf("no agent %q in the config", shorten(cl.Agent)), "give the id of a configured agent")
		}
		required(ps, p+".token", cl.Token, "the client's bearer token, e.g. env:MCP_LAPTOP_TOKEN (one token per client)")
		if other, dup := byToken[cl.Token]; dup && cl.Token != "" {
			ps.at(p+".token", fmt.Sprintf("is the same token as client %s's", other), "give every client its own token, so that the audit tells them apart")
		}
		byToken[cl.Token] = cl.Name
	}
}

// validateMCPResolved refuses weak tokens once they are resolved.
func validateMCPResolved(c *Config, ps *problems) {
	for i, cl := range c.Instance.MCP.Clients {
		if cl.Token != "" && len(cl.Token) < 16 {
			ps.at(indexPath("instance.mcp.clients", i)+".token", "is shorter than 16 characters, too weak for a bearer token",
				"use at least 32 random characters, e.g. from: openssl rand -hex 32")
		}
	}
}

func hasAgent(c *Config, id string) bool {
	_, ok := c.Agent(id)
	return ok
}
