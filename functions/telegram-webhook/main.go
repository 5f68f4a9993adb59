// Command telegram-webhook is the telegram-webhook Lambda (see shared/platform/deploy): env → builder → lambdamain.Start.
// Its builder (shared/app/telegramwebhookfn) links only what this function uses.
package main

import (
	"github.com/switchboard-dev/switchboard/shared/app/telegramwebhookfn"
	"github.com/switchboard-dev/switchboard/shared/platform/lambdamain"
)

func main() { lambdamain.Start("telegram-webhook", telegramwebhookfn.Build) }
