// Command rocketchat-webhook is the rocketchat-webhook Lambda (see shared/platform/deploy): env → builder → lambdamain.Start.
// The builder (shared/app/receive) links only what this function uses.
package main

import (
	"github.com/switchboard-dev/switchboard/shared/app/receive"
	"github.com/switchboard-dev/switchboard/shared/platform/lambdamain"
)

func main() { lambdamain.Start("rocketchat-webhook", receive.RocketChatWebhook) }
