// Command rocketchat-webhook is the rocketchat-webhook Lambda (see shared/platform/deploy): env → builder → lambdamain.Start.
// Its builder (shared/app/rocketchatwebhookfn) links only what this function uses.
package main

import (
	"github.com/switchboard-dev/switchboard/shared/app/rocketchatwebhookfn"
	"github.com/switchboard-dev/switchboard/shared/platform/lambdamain"
)

func main() { lambdamain.Start("rocketchat-webhook", rocketchatwebhookfn.Build) }
