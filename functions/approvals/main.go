// Command approvals is the approvals Lambda (see shared/platform/deploy): env → app → handler → lambda.Start.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/switchboard-dev/switchboard/shared/app"
	"github.com/switchboard-dev/switchboard/shared/handlers"
)

func main() {
	a, err := app.New(context.Background(), os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "approvals:", err)
		os.Exit(1)
	}
	lambda.Start(handlers.Approvals(a))
}
