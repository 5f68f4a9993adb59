// Command mcp is the MCP Lambda (see shared/platform/deploy): env → builder → lambdamain.Start.
// The builder (shared/app/act) links only what this function uses.
package main

import (
	"github.com/switchboard-dev/switchboard/shared/app/act"
	"github.com/switchboard-dev/switchboard/shared/platform/lambdamain"
)

func main() { lambdamain.Start("mcp", act.MCP) }
