package dynamo

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

// mapErr translates a DynamoDB error into the domain vocabulary. It is the
// only place that knows DynamoDB's error names. table is the physical table
// the request went to.
func mapErr(op, table string, err error) error {
	if err == nil {
		return nil
	}
	var (
		condFailed *types.ConditionalCheckFailedException
		notFound   *types.ResourceNotFoundException
	)
	switch {
	case errors.As(err, &condFailed):
		return switchboard.Wrap(op, switchboard.ECONFLICT,
			"already recorded; a repeated write is not applied twice", err)
	case errors.As(err, &notFound):
		return switchboard.Wrap(op, switchboard.EINTERNAL,
			fmt.Sprintf("table %s is missing; run make dev or cdk deploy", table), err)
	case unavailable(err):
		return switchboard.Wrap(op, switchboard.EUNAVAILABLE,
			"the database is busy or unreachable; try again in a moment", err)
	}
	return switchboard.Wrap(op, switchboard.EINTERNAL,
		"database request failed; the operator can find details in the logs", err)
}

// unavailable reports errors where retrying later may work: throttling,
// server faults, timeouts, cancellations and transport failures.
func unavailable(err error) bool {
	var (
		throughput *types.ProvisionedThroughputExceededException
		limit      *types.RequestLimitExceeded
		throttle   *types.ThrottlingException
		internal   *types.InternalServerError
		send       *smithyhttp.RequestSendError
		netErr     net.Error
	)
	if errors.As(err, &throughput) || errors.As(err, &limit) || errors.As(err, &throttle) ||
		errors.As(err, &internal) || errors.As(err, &send) {
		return true
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return true
	}
	if errors.As(err, &netErr) {
		return true // refused, reset, DNS, timeout: the endpoint is not answering
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "ThrottlingException", "Throttling", "ProvisionedThroughputExceededException",
			"RequestLimitExceeded", "ServiceUnavailable", "InternalFailure", "InternalServerError":
			return true
		}
	}
	var status interface{ HTTPStatusCode() int }
	if errors.As(err, &status) && status.HTTPStatusCode() >= 500 {
		return true
	}
	return false
}
