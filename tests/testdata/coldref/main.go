// Command coldref is the reference for BenchmarkColdStart: the smallest
// Lambda that does what every Switchboard function must do before it is
// ready (load the AWS config, build a DynamoDB client, start aws-lambda-go).
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

func main() {
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, "coldref:", err)
		os.Exit(1)
	}
	db := dynamodb.NewFromConfig(cfg)
	lambda.Start(func(ctx context.Context) (string, error) {
		_ = db
		return "hello", nil
	})
}
