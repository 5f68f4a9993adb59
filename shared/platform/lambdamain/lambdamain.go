// Package lambdamain is the whole main of every Lambda binary: build the
// function's handler from its environment, then hand it to the Lambda
// runtime.
package lambdamain

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
)

// Builder makes a function's handler from its environment.
type Builder func(ctx context.Context, getenv func(string) string) (any, error)

// Start builds the handler from the process environment and serves it; a
// build error is printed under the function's name and ends the process
// with status 1, which Lambda reports as an init failure.
func Start(name string, build Builder) {
	h, err := build(context.Background(), os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(1)
	}
	lambda.Start(h)
}
