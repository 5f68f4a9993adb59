// Command mcp is the MCP Lambda (see shared/platform/deploy): env → builder → lambdamain.Start.
// The builder (shared/app/mcpfn) links only what this function uses.
package main

import (
	"github.com/switchboard-dev/switchboard/shared/app/mcpfn"
	"github.com/switchboard-dev/switchboard/shared/platform/lambdamain"
)

func main() { lambdamain.Start("mcp", mcpfn.Build) }
