package devrt

import (
	"strings"
	"testing"

	swcfg "github.com/switchboard-dev/switchboard/shared/platform/config"
)

func TestAnnounceMCPPrintsURLAndTokens(t *testing.T) {
	var b strings.Builder
	announceMCP(&b, "http://127.0.0.1:8080", []swcfg.MCPClient{{Name: "hermes-desktop", Agent: "hermes", Token: "dev-mcp-hermes-token"}})
	for _, want := range []string{"http://127.0.0.1:8080/mcp", "hermes-desktop (acts as hermes): Bearer dev-mcp-hermes-token"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("announcement %q lacks %q", b.String(), want)
		}
	}
	b.Reset()
	if announceMCP(&b, "http://x", nil); b.Len() != 0 {
		t.Errorf("no clients, yet printed %q", b.String())
	}
}
