// Package bedrock is the model provider for Amazon Bedrock's Converse API:
// it turns an sb.ModelRequest into a Converse request (system blocks,
// text/toolUse/toolResult content blocks, a tool configuration), the answer
// back into an sb.ModelResponse, and every failure into a switchboard error
// code. Client sends the request, SigV4-signed, without the SDK's Bedrock
// Runtime client; the caller builds it once per cold start from the AWS
// config (AWS_ENDPOINT_URL* applies).
package bedrock

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/adapters/modelretry"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// ConverseAPI is the Converse call: body is the request's JSON for modelID,
// the answer the response's JSON. Errors as Client's (an *APIError for a
// refusal, a *SendError when nothing answered). *Client implements it,
// tests pass a fake.
type ConverseAPI interface {
	Converse(ctx context.Context, modelID string, body []byte) ([]byte, error)
}

// Model is one Bedrock model (a model id, inference profile id or ARN). It is
// safe for concurrent use when the client is (Client is).
type Model struct {
	client  ConverseAPI
	modelID string
	retry   modelretry.Policy
}

var _ sb.Model = (*Model)(nil)

// New returns the model modelID reached through client.
func New(client ConverseAPI, modelID string) *Model {
	return &Model{client: client, modelID: strings.TrimSpace(modelID), retry: modelretry.Default()}
}

// WithRetry returns a copy of m that retries by p (modelretry.Default()
// unless changed; MaxAttempts 1 turns retries off).
func (m *Model) WithRetry(p modelretry.Policy) *Model {
	c := *m
	c.retry = p
	return &c
}

// maxServerMessage caps an AWS validation message passed on to a caller.
const maxServerMessage = 500

// Complete implements sb.Model. Errors: ERATELIMITED when Bedrock
// throttles or a quota is exhausted; EUNAVAILABLE for internal errors,
// unavailability, model timeouts, a model that is not ready, network
// failures and timeouts; EUNAUTHORIZED when IAM denies access; EINVALID when
// Bedrock rejects the request (with its message), when the model id is empty
// or a tool name is not acceptable; ENOTFOUND when the model does not exist
// in the region; EINTERNAL for anything else (credentials that cannot be
// loaded, an unexpected answer).
//
// Throttling, exhausted quotas, unavailability, internal errors, model
// timeouts, a model that is not ready and network failures are retried by
// the model's retry policy within ctx's deadline (the client itself never
// retries); when it gives up the error is EUNAVAILABLE and says after how
// many attempts.
func (m *Model) Complete(ctx context.Context, req sb.ModelRequest) (sb.ModelResponse, error) {
	const op = "bedrock.converse"
	if m.modelID == "" {
		return sb.ModelResponse{}, sb.E(op, sb.EINVALID, "model.model is empty; set the Bedrock model id, e.g. anthropic.claude-3-5-haiku-20241022-v1:0")
	}
	in, err := m.toInput(req)
	if err != nil {
		return sb.ModelResponse{}, err
	}
	out, _, err := modelretry.Do(ctx, m.retry, op, func(ctx context.Context) ([]byte, error) {
		out, err := m.client.Converse(ctx, m.modelID, in)
		if err != nil {
			return nil, m.mapError(op, err)
		}
		return out, nil
	})
	if err != nil {
		return sb.ModelResponse{}, err
	}
	resp, err := fromOutput(out)
	if err != nil {
		return sb.ModelResponse{}, sb.Wrap(op, sb.EINTERNAL, fmt.Sprintf("Bedrock answered model %s in an unexpected shape", m.modelID), err)
	}
	return resp, nil
}

// mapError is the one table from Bedrock Runtime errors to codes. AWS's own
// text is passed on only for validation errors (it says what is wrong with
// the request); access-denied text names account and role ARNs, so it stays
// in the wrapped cause for the logs.
func (m *Model) mapError(op string, err error) error {
	var (
		apiErr  *APIError
		sendErr *SendError
		netErr  net.Error
	)
	code := ""
	if errors.As(err, &apiErr) {
		code = apiErr.Code
	}
	switch {
	case code == "ThrottlingException":
		return sb.Wrap(op, sb.ERATELIMITED, fmt.Sprintf("Bedrock is throttling requests to model %s; retry later, and raise the account's quota if this persists", m.modelID), err)
	case code == "ServiceQuotaExceededException":
		return sb.Wrap(op, sb.ERATELIMITED, fmt.Sprintf("the account's Bedrock quota for model %s is exhausted; retry later or request a higher quota", m.modelID), err)
	case code == "ServiceUnavailableException", code == "InternalServerException":
		return sb.Wrap(op, sb.EUNAVAILABLE, "Bedrock is temporarily unavailable; try again later", err)
	case code == "ModelTimeoutException":
		return sb.Wrap(op, sb.EUNAVAILABLE, fmt.Sprintf("model %s took too long to answer; try again, or ask for less at once", m.modelID), err)
	case code == "ModelErrorException":
		return sb.Wrap(op, sb.EUNAVAILABLE, fmt.Sprintf("model %s failed while answering; try again later", m.modelID), err)
	case code == "ModelNotReadyException":
		return sb.Wrap(op, sb.EUNAVAILABLE, fmt.Sprintf("model %s is not ready yet; try again in a minute", m.modelID), err)
	case code == "AccessDeniedException":
		return sb.Wrap(op, sb.EUNAUTHORIZED, fmt.Sprintf("access to Bedrock model %s was denied; grant bedrock:InvokeModel for the model to the function's role and enable model access in the Bedrock console", m.modelID), err)
	case code == "ValidationException":
		return sb.Wrap(op, sb.EINVALID, fmt.Sprintf("Bedrock rejected the request for model %s: %s", m.modelID, capMessage(apiErr.Message)), err)
	case code == "ResourceNotFoundException":
		return sb.Wrap(op, sb.ENOTFOUND, fmt.Sprintf("Bedrock model %s was not found in this region; check model.model and model.region", m.modelID), err)
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()):
		return sb.Wrap(op, sb.EUNAVAILABLE, fmt.Sprintf("Bedrock did not answer in time for model %s; try again later", m.modelID), err)
	case errors.Is(err, context.Canceled):
		return sb.Wrap(op, sb.EUNAVAILABLE, "the Bedrock request was cancelled", err)
	case errors.As(err, &sendErr):
		return sb.Wrap(op, sb.EUNAVAILABLE, "cannot reach Bedrock; check the network and model.baseUrl if one is set", err)
	case apiErr != nil && apiErr.Status >= 500:
		// Not a modelled error, or not even a JSON body (a proxy's 502).
		return sb.Wrap(op, sb.EUNAVAILABLE, fmt.Sprintf("Bedrock failed (HTTP %d); try again later", apiErr.Status), err)
	case apiErr != nil && code != "":
		return sb.Wrap(op, sb.EINTERNAL, fmt.Sprintf("Bedrock answered model %s with error %s; the operator can find details in the logs", m.modelID, code), err)
	case apiErr != nil:
		return sb.Wrap(op, sb.EINTERNAL, fmt.Sprintf("Bedrock answered model %s with an unexpected HTTP %d; the operator can find details in the logs", m.modelID, apiErr.Status), err)
	default:
		// Typically credentials or region that could not be resolved: the
		// request never left.
		return sb.Wrap(op, sb.EINTERNAL, "the Bedrock request could not be made; check the AWS credentials and region of the function", err)
	}
}

func capMessage(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > maxServerMessage {
		s = s[:maxServerMessage] + "…"
	}
	if s == "" {
		s = "no reason given"
	}
	return s
}
