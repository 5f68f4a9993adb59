// Command console is the console Lambda (see shared/platform/deploy): env → builder → lambdamain.Start.
// Its builder (shared/app/consolefn) links only what this function uses.
package main

import (
	"github.com/switchboard-dev/switchboard/shared/app/consolefn"
	"github.com/switchboard-dev/switchboard/shared/platform/lambdamain"
)

func main() { lambdamain.Start("console", consolefn.Build) }
