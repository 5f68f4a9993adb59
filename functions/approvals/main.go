// Command approvals is the approvals Lambda (see shared/platform/deploy): env → builder → lambdamain.Start.
// Its builder (shared/app/approvalsfn) links only what this function uses.
package main

import (
	"github.com/switchboard-dev/switchboard/shared/app/approvalsfn"
	"github.com/switchboard-dev/switchboard/shared/platform/lambdamain"
)

func main() { lambdamain.Start("approvals", approvalsfn.Build) }
