// Command approvals is the approvals Lambda (see shared/platform/deploy): env → builder → lambdamain.Start.
// The builder (shared/app/decide) links only what this function uses.
package main

import (
	"github.com/switchboard-dev/switchboard/shared/app/decide"
	"github.com/switchboard-dev/switchboard/shared/platform/lambdamain"
)

func main() { lambdamain.Start("approvals", decide.Approvals) }
