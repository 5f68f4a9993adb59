// Command rocketchat-webhook is the rocketchat-webhook Lambda (see shared/platform/deploy): env → builder → lambda.Start.
// The builder (shared/app/receive) links only what this function uses.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/switchboard-dev/switchboard/shared/app/receive"
)

func main() {
	h, err := receive.RocketChatWebhook(context.Background(), os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "rocketchat-webhook:", err)
		os.Exit(1)
	}
	lambda.Start(h)
}
