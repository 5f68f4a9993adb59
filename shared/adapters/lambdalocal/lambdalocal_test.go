package lambdalocal_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/switchboard-dev/switchboard/shared/adapters/lambdalocal"
	"github.com/switchboard-dev/switchboard/shared/platform/taskerr"
)

type valueError struct{}

func (valueError) Error() string { return "value" }

func TestInvoke(t *testing.T) {
	inv := lambdalocal.Invoker{
		"echo": lambda.NewHandler(func(ctx context.Context, in struct{ Name string }) (map[string]string, error) {
			return map[string]string{"hello": in.Name}, nil
		}),
		"denied": lambda.NewHandler(func(ctx context.Context) error {
			return &taskerr.DeniedError{Reason: "not you"}
		}),
		"value-error": lambda.NewHandler(func(ctx context.Context) error { return valueError{} }),
		// Wrapping hides the type: aws-lambda-go reports the wrapper's, so
		// handlers must return taskerr types unwrapped.
		"wrapped": lambda.NewHandler(func(ctx context.Context) error {
			return errorsJoin(&taskerr.TransientError{Message: "429"})
		}),
		"panics": lambda.NewHandler(func(ctx context.Context) error { panic("boom") }),
		"huge": lambda.NewHandler(func(ctx context.Context) (string, error) {
			return strings.Repeat("x", lambdalocal.MaxPayload), nil
		}),
	}
	srv := httptest.NewServer(inv)
	defer srv.Close()

	tests := []struct {
		name, function, body string
		wantStatus           int
		wantFunctionError    bool
		wantErrorType        string // errorType, or X-Amzn-ErrorType for service errors
		wantBody             string
	}{
		{name: "result", function: "echo", body: `{"Name":"bob"}`, wantStatus: 200, wantBody: `{"hello":"bob"}`},
		{name: "by ARN", function: "arn:aws:lambda:us-east-1:000000000000:function:echo", body: `{"Name":"ann"}`, wantStatus: 200, wantBody: `{"hello":"ann"}`},
		{name: "pointer error type", function: "denied", body: `{}`, wantStatus: 200, wantFunctionError: true, wantErrorType: "DeniedError"},
		{name: "value error type", function: "value-error", body: `{}`, wantStatus: 200, wantFunctionError: true, wantErrorType: "valueError"},
		{name: "wrapped error", function: "wrapped", body: `{}`, wantStatus: 200, wantFunctionError: true, wantErrorType: "joinError"},
		{name: "panic", function: "panics", body: `{}`, wantStatus: 200, wantFunctionError: true, wantErrorType: "string"},
		{name: "response too large", function: "huge", body: `{}`, wantStatus: 200, wantFunctionError: true, wantErrorType: "Function.ResponseSizeTooLarge"},
		{name: "unknown function", function: "nope", body: `{}`, wantStatus: 404, wantErrorType: "ResourceNotFoundException"},
		{name: "request too large", function: "echo", body: `"` + strings.Repeat("x", lambdalocal.MaxPayload) + `"`, wantStatus: 413, wantErrorType: "RequestTooLargeException"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := http.Post(srv.URL+"/2015-03-31/functions/"+tt.function+"/invocations", "application/json", strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status %d, want %d (%s)", resp.StatusCode, tt.wantStatus, body)
			}
			if got := resp.Header.Get("X-Amz-Function-Error") != ""; got != tt.wantFunctionError {
				t.Fatalf("function error %v, want %v (%s)", got, tt.wantFunctionError, body)
			}
			switch {
			case tt.wantFunctionError:
				var e struct{ ErrorType, ErrorMessage string }
				if err := json.Unmarshal(body, &e); err != nil || e.ErrorType != tt.wantErrorType || e.ErrorMessage == "" {
					t.Errorf("error payload %s, want errorType %s with a message", body, tt.wantErrorType)
				}
			case tt.wantStatus != 200:
				if got := resp.Header.Get("X-Amzn-ErrorType"); got != tt.wantErrorType {
					t.Errorf("X-Amzn-ErrorType %q, want %q", got, tt.wantErrorType)
				}
			default:
				if strings.TrimSpace(string(body)) != tt.wantBody {
					t.Errorf("body %s, want %s", body, tt.wantBody)
				}
			}
		})
	}
}

func errorsJoin(err error) error { return errors.Join(err) }

func TestErrorTypeMatchesTaskerrNames(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want string
	}{
		{&taskerr.TransientError{}, taskerr.NameTransient},
		{&taskerr.PermanentError{}, taskerr.NamePermanent},
		{&taskerr.DeniedError{}, taskerr.NameDenied},
	} {
		if got := lambdalocal.ErrorType(tt.err); got != tt.want {
			t.Errorf("ErrorType(%T) = %q, want %q", tt.err, got, tt.want)
		}
	}
}
