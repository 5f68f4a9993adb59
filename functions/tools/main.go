// Command tools is the tools Lambda (see shared/platform/deploy): env → builder → lambdamain.Start.
// Its builder (shared/app/toolsfn) links only what this function uses.
package main

import (
	"github.com/switchboard-dev/switchboard/shared/app/toolsfn"
	"github.com/switchboard-dev/switchboard/shared/platform/lambdamain"
)

func main() { lambdamain.Start("tools", toolsfn.Build) }
