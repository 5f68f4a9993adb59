// Command jobs is the jobs Lambda (see shared/platform/deploy): env → builder → lambdamain.Start.
// Its builder (shared/app/jobsfn) links only what this function uses.
package main

import (
	"github.com/switchboard-dev/switchboard/shared/app/jobsfn"
	"github.com/switchboard-dev/switchboard/shared/platform/lambdamain"
)

func main() { lambdamain.Start("jobs", jobsfn.Build) }
