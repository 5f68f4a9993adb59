// Command agent-worker is the agent-worker Lambda (see shared/platform/deploy): env → builder → lambdamain.Start.
// Its builder (shared/app/agentworkerfn) links only what this function uses.
package main

import (
	"github.com/switchboard-dev/switchboard/shared/app/agentworkerfn"
	"github.com/switchboard-dev/switchboard/shared/platform/lambdamain"
)

func main() { lambdamain.Start("agent-worker", agentworkerfn.Build) }
