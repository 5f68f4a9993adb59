package dynamo

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/switchboard-dev/switchboard/shared/adapters/awssigned"
	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/ddb"
	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

// mapErr translates a DynamoDB error into the domain vocabulary. It is the
// only place that knows DynamoDB's error names. table is the physical table
// the request went to.
func mapErr(op, table string, err error) error {
	if err == nil {
		return nil
	}
	switch {
	case ddb.Code(err) == ddb.ConditionalCheckFailed:
		return switchboard.Wrap(op, switchboard.ECONFLICT,
			"already recorded; a repeated write is not applied twice", err)
	case ddb.Code(err) == ddb.ResourceNotFound:
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
		api    *ddb.Error
		send   *awssigned.SendError
		netErr net.Error
	)
	if errors.As(err, &api) {
		switch api.Code {
		case "ThrottlingException", "Throttling", "ProvisionedThroughputExceededException",
			"RequestLimitExceeded", "ServiceUnavailable", "InternalFailure", "InternalServerError":
			return true
		}
		return api.Status >= 500
	}
	if errors.As(err, &send) {
		return true
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return true
	}
	return errors.As(err, &netErr) // refused, reset, DNS, timeout: the endpoint is not answering
}
