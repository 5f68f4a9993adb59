package guard_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
)

// TestOnlyTheMCPFunctionLinksTheMCPSDK: the MCP SDK's packages cost a
// function about 1.4 MB of binary and their package init, so only the mcp
// function (its builder, shared/app/mcpfn) may link them; the tools, jobs
// and agent-worker functions share the actions layer without it.
func TestOnlyTheMCPFunctionLinksTheMCPSDK(t *testing.T) {
	r := loadRepo(t)
	cmd := exec.Command("go", "list", "-tags", deploy.BuildTags, "-f", `{{.ImportPath}} {{join .Deps " "}}`, "./functions/...")
	cmd.Dir = r.root
	cmd.Env = append(cmd.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, deps, _ := strings.Cut(line, " ")
		name := strings.TrimPrefix(pkg, r.module+"/functions/")
		seen[name] = true
		links := strings.Contains(" "+deps, " github.com/modelcontextprotocol/go-sdk/")
		if links != (name == "mcp") {
			t.Errorf("functions/%s links the MCP SDK: %v; only functions/mcp may", name, links)
		}
	}
	for _, f := range deploy.Functions {
		if !seen[f.Name] {
			t.Errorf("go list did not list functions/%s", f.Name)
		}
	}
}
