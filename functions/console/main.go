// Command console is the web console Lambda (see shared/platform/deploy): env → builder → lambdamain.Start.
// The builder (shared/app/view) links only what this function reads.
package main

import (
	"github.com/switchboard-dev/switchboard/shared/app/view"
	"github.com/switchboard-dev/switchboard/shared/platform/lambdamain"
)

func main() { lambdamain.Start("console", view.Console) }
