// Command agent-worker is the agent-worker Lambda (see shared/platform/deploy): env → builder → lambda.Start.
// The builder (shared/app/run) links only what this function uses.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/switchboard-dev/switchboard/shared/app/run"
)

func main() {
	h, err := run.AgentWorker(context.Background(), os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "agent-worker:", err)
		os.Exit(1)
	}
	lambda.Start(h)
}
