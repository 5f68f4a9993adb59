package config

import (
	"context"
	"strings"
	"testing"
)

func TestMCPClients(t *testing.T) {
	withClients := func(clients string) string {
		return strings.Replace(base, "model:", "mcp:\n    clients:\n"+clients+"  model:", 1)
	}
	good := withClients("      - {name: laptop, agent: hermes, token: laptop-token-0123456789}\n")
	c, err := Parse(context.Background(), "t.yaml", []byte(good), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Instance.MCP.Clients; len(got) != 1 || got[0] != (MCPClient{Name: "laptop", Agent: "hermes", Token: "laptop-token-0123456789"}) {
		t.Errorf("clients = %+v", got)
	}
	if s := c.Secrets(); !strings.Contains(strings.Join(s, " "), "laptop-token-0123456789") {
		t.Errorf("the client token is not among the secrets to scrub: %v", s)
	}
	tests := []struct{ name, clients, want string }{
		{"no name", "      - {agent: hermes, token: laptop-token-0123456789}\n", "instance.mcp.clients[0].name: is required"},
		{"bad name", "      - {name: My Laptop, agent: hermes, token: laptop-token-0123456789}\n", `instance.mcp.clients[0].name: "My Laptop" is not a valid client name`},
		{"unknown agent", "      - {name: laptop, agent: zeus, token: laptop-token-0123456789}\n", `instance.mcp.clients[0].agent: no agent "zeus" in the config`},
		{"no token", "      - {name: laptop, agent: hermes}\n", "instance.mcp.clients[0].token: is required"},
		{"short token", "      - {name: laptop, agent: hermes, token: short}\n", "instance.mcp.clients[0].token: is shorter than 16 characters"},
		{"twice", "      - {name: laptop, agent: hermes, token: laptop-token-0123456789}\n      - {name: laptop, agent: hermes, token: other-token-0123456789}\n",
			"instance.mcp.clients[1].name: client laptop is listed twice"},
		{"shared token", "      - {name: laptop, agent: hermes, token: laptop-token-0123456789}\n      - {name: ide, agent: hermes, token: laptop-token-0123456789}\n",
			"instance.mcp.clients[1].token: is the same token as client laptop's"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(context.Background(), "t.yaml", []byte(withClients(tc.clients)), noEnv)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want %q", err, tc.want)
			}
		})
	}
}
