// Command agent-worker is the agent-worker Lambda (see shared/platform/deploy): env → builder → lambdamain.Start.
// The builder (shared/app/run) links only what this function uses.
package main

import (
	"github.com/switchboard-dev/switchboard/shared/app/run"
	"github.com/switchboard-dev/switchboard/shared/platform/lambdamain"
)

func main() { lambdamain.Start("agent-worker", run.AgentWorker) }
