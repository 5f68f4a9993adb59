// Command tools is the tools Lambda (see shared/platform/deploy): env → builder → lambda.Start.
// The builder (shared/app/act) links only what this function uses.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/switchboard-dev/switchboard/shared/app/act"
)

func main() {
	h, err := act.Tools(context.Background(), os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tools:", err)
		os.Exit(1)
	}
	lambda.Start(h)
}
