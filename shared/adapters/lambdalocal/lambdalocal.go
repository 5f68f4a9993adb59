// Package lambdalocal serves the Lambda Invoke API on a local listener and
// runs the real handlers in-process, so the local Step Functions runtime's
// Task states call the same code the deployed functions run. Handlers are
// built with lambda.NewHandler from the very function each functions/<name>
// passes to lambda.Start, which keeps aws-lambda-go's decode path.
//
// The wire format is AWS's: POST /2015-03-31/functions/{name}/invocations
// with the payload as body; a handler error is answered 200 with
// X-Amz-Function-Error: Unhandled and {"errorMessage","errorType"}, where
// errorType is what aws-lambda-go reports (the Go type name of the returned
// error, no unwrapping); an unknown function is 404
// ResourceNotFoundException.
package lambdalocal

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"strings"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambda/messages"
)

// MaxPayload is Lambda's limit for a synchronous invocation's request and
// response (6 MB).
const MaxPayload = 6 * 1024 * 1024

// Invoker maps a function name to its handler. A request may name the
// function by name or by ARN.
type Invoker map[string]lambda.Handler

// ServeHTTP implements the Invoke API.
func (inv Invoker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/2015-03-31/functions/")
	name, ok2 := strings.CutSuffix(rest, "/invocations")
	if !ok || !ok2 || r.Method != http.MethodPost {
		serviceError(w, http.StatusNotFound, "ResourceNotFoundException", "sfn-local Lambda endpoint: want POST /2015-03-31/functions/{name}/invocations")
		return
	}
	if i := strings.LastIndex(name, ":function:"); i >= 0 { // ARN → name (a :qualifier is not used)
		name = name[i+len(":function:"):]
	}
	h, ok := inv[name]
	if !ok {
		serviceError(w, http.StatusNotFound, "ResourceNotFoundException", "Function not found: "+name)
		return
	}
	payload, err := io.ReadAll(io.LimitReader(r.Body, MaxPayload+1))
	if err != nil {
		serviceError(w, http.StatusBadRequest, "InvalidRequestContentException", "read request: "+err.Error())
		return
	}
	if len(payload) > MaxPayload {
		serviceError(w, http.StatusRequestEntityTooLarge, "RequestTooLargeException", "Request must be smaller than 6291456 bytes for the InvokeFunction operation")
		return
	}
	out, invokeErr := invoke(r, h, payload)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amz-Executed-Version", "$LATEST")
	if invokeErr == nil && len(out) > MaxPayload {
		invokeErr = &messages.InvokeResponse_Error{Type: "Function.ResponseSizeTooLarge",
			Message: fmt.Sprintf("Response payload size (%d bytes) exceeded maximum allowed payload size (6291456 bytes).", len(out))}
	}
	if invokeErr != nil {
		w.Header().Set("X-Amz-Function-Error", "Unhandled")
		_ = json.NewEncoder(w).Encode(invokeErr)
		return
	}
	_, _ = w.Write(out)
}

// invoke runs the handler and turns a returned error or a panic into the
// error payload aws-lambda-go would send.
func invoke(r *http.Request, h lambda.Handler, payload []byte) (out []byte, e *messages.InvokeResponse_Error) {
	defer func() {
		if v := recover(); v != nil {
			slog.Error("lambdalocal: handler panicked", "path", r.URL.Path, "panic", fmt.Sprint(v))
			e = &messages.InvokeResponse_Error{Type: ErrorType(v), Message: fmt.Sprint(v)}
		}
	}()
	out, err := h.Invoke(r.Context(), payload)
	if err != nil {
		if ive, ok := err.(messages.InvokeResponse_Error); ok {
			return nil, &ive
		}
		return nil, &messages.InvokeResponse_Error{Type: ErrorType(err), Message: err.Error()}
	}
	return out, nil
}

// ErrorType is the errorType aws-lambda-go reports for a returned error or
// a panic value: the name of its dynamic type, behind one pointer.
func ErrorType(v any) string {
	t := reflect.TypeOf(v)
	if t == nil {
		return ""
	}
	if t.Kind() == reflect.Pointer {
		return t.Elem().Name()
	}
	return t.Name()
}

// serviceError answers like the Lambda service itself (not the function).
func serviceError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-ErrorType", typ)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"Type": "User", "Message": msg})
}
