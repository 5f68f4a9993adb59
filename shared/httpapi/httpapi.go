// Package httpapi is the HTTP transport: every endpoint (the tools, the
// Rocket.Chat and Telegram webhooks, the approval pages) over the use
// cases' plain methods, the routes that function URLs serve in AWS and the
// dev listener serves locally, the one table that maps domain error codes
// to HTTP status, strict JSON decoding and the auth guards. Every function
// links this package but uses only its own endpoint: nothing here is built
// at package init (the approval page's CSP is built on first use), so the
// others cost no start time and the linker drops their code.
package httpapi

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"mime"
	"net/http"
	"reflect"
	"strings"

	"github.com/aws/aws-lambda-go/lambdaurl"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// MaxBody caps every request body.
const MaxBody = 1 << 20

// statusOf is the one table that turns outcomes into HTTP status: the
// domain's error codes (every JSON endpoint), and the outcomes of an
// approval link (the approval page, keyed "approval." + the outcome kind).
var statusOf = map[string]int{
	sb.EINVALID:      http.StatusBadRequest,
	sb.ENOTFOUND:     http.StatusNotFound,
	sb.ECONFLICT:     http.StatusConflict,
	sb.EUNAUTHORIZED: http.StatusUnauthorized,
	sb.EFORBIDDEN:    http.StatusForbidden,
	sb.ERATELIMITED:  http.StatusTooManyRequests,
	sb.EUNAVAILABLE:  http.StatusServiceUnavailable,
	sb.EINTERNAL:     http.StatusInternalServerError,

	"approval.ready":           http.StatusOK,
	"approval.approved":        http.StatusOK, // the worker runs the call; the agent reports back
	"approval.failed":          http.StatusOK, // the decision worked; the page says the action did not run
	"approval.denied":          http.StatusOK,
	"approval.already_decided": http.StatusConflict,
	"approval.invalid_token":   http.StatusForbidden,
	"approval.not_approver":    http.StatusForbidden,
	"approval.expired":         http.StatusGone,
	"approval.unknown":         http.StatusNotFound,
	"approval.malformed":       http.StatusBadRequest,
}

// Status maps an error to its HTTP status.
func Status(err error) int {
	if s, ok := statusOf[sb.ErrorCode(err)]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// ApprovalStatus maps the outcome kind of an approval link (approvals.
// OutcomeKind) to the status of its page; 500 for a kind the table lacks.
func ApprovalStatus(kind string) int {
	if s, ok := statusOf["approval."+kind]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// WriteJSON writes v with status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// WriteError answers with an error envelope whose text is caller-safe; the
// detail goes to the log.
func WriteError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	status := Status(err)
	if status >= 500 {
		log.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	env := sb.FailErr(err)
	var e *sb.Error
	if errors.As(err, &e) && e.RetryAfter > 0 {
		w.Header().Set("Retry-After", fmt.Sprint(max(1, int(math.Ceil(e.RetryAfter.Seconds())))))
	}
	WriteJSON(w, status, env)
}

// DecodeJSON decodes a JSON object strictly: unknown fields, trailing data
// and bodies over MaxBody are EINVALID errors that say what to fix.
func DecodeJSON(r *http.Request, v any) error {
	const op = "httpapi.decode"
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			return sb.E(op, sb.EINVALID, "send the body as application/json (Content-Type: application/json)")
		}
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
	if err != nil {
		return sb.Wrap(op, sb.EINVALID, "the request body could not be read", err)
	}
	if len(body) > MaxBody {
		return sb.E(op, sb.EINVALID, fmt.Sprintf("the request body is larger than %d bytes", MaxBody))
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return sb.E(op, sb.EINVALID, "the request body is empty; send a JSON object")
	}
	if trimmed[0] != '{' {
		return sb.E(op, sb.EINVALID, "the request body must be a JSON object ({…})")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return sb.Wrap(op, sb.EINVALID, "the request body is not the expected JSON object: "+jsonProblem(err), err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return sb.E(op, sb.EINVALID, "the request body has data after the JSON object; send exactly one object")
	}
	return nil
}

func jsonProblem(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("syntax error at byte %d", syn.Offset)
	case errors.As(err, &typ):
		return fmt.Sprintf("field %q must be %s, not %s", typ.Field, jsonKind(typ.Type.Kind()), typ.Value)
	case errors.Is(err, io.EOF):
		return "the body is empty"
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return strings.TrimPrefix(err.Error(), "json: ") + " (check the spelling)"
	}
	return "malformed JSON"
}

// jsonKind names a Go kind the way a JSON author thinks of it.
func jsonKind(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list"
	}
	return "an object"
}

// Bearer requires "Authorization: Bearer <token>" matching one of tokens.
// The comparison is constant-time over SHA-256 digests (so length leaks
// nothing either); with no tokens configured every request is refused.
func Bearer(tokens []string, next http.Handler) http.Handler {
	digests := make([][32]byte, 0, len(tokens))
	for _, t := range tokens {
		if t != "" {
			digests = append(digests, sha256.Sum256([]byte(t)))
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The scheme is case-insensitive (RFC 7235 §2.1); the token is not.
		scheme, got, ok := strings.Cut(r.Header.Get("Authorization"), " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") || !TokenMatches(digests, got) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="switchboard"`)
			WriteJSON(w, http.StatusUnauthorized, sb.Fail("missing or wrong token; send the tool API token (instance.toolApiToken) in the Authorization header as a bearer token"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// TokenMatches compares got against every digest in constant time.
func TokenMatches(digests [][32]byte, got string) bool {
	g := sha256.Sum256([]byte(got))
	match := 0
	for _, d := range digests {
		match |= subtle.ConstantTimeCompare(d[:], g[:])
	}
	return match == 1 && got != ""
}

// RequireIAM guards a handler behind a function URL with AuthType AWS_IAM: it
// refuses any request whose Lambda context carries no IAM identity, so that a
// misconfigured URL (AuthType NONE) fails closed instead of open.
func RequireIAM(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ev, ok := lambdaurl.RequestFromContext(r.Context())
		if !ok || ev.RequestContext.Authorizer == nil || ev.RequestContext.Authorizer.IAM == nil ||
			ev.RequestContext.Authorizer.IAM.UserARN == "" && ev.RequestContext.Authorizer.IAM.CallerID == "" {
			WriteJSON(w, http.StatusForbidden, sb.Fail("this function URL needs AWS_IAM auth; sign the request with SigV4"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// HeaderRunID names the agent run an answer belongs to (set by routes that
// start a run), for request logs and callers that want to follow the chain.
const HeaderRunID = "X-Switchboard-Run-Id"
