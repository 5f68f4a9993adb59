// Package openai is the model provider for any OpenAI-compatible
// chat-completions endpoint (OpenAI, Ollama, vLLM, …): it turns an
// sb.ModelRequest into POST {baseURL}/chat/completions, the answer back into
// an sb.ModelResponse, and every failure into a switchboard error code. The
// API key is sent only in the Authorization header; it never appears in an
// error, and no message of the server is passed on without it masked.
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/modelretry"
	"github.com/switchboard-dev/switchboard/shared/platform/retryafter"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// DefaultTimeout bounds one completion when New gets no *http.Client. A local
// model on a CPU can take a minute for a long answer; the run's context (the
// Lambda deadline) bounds it too.
const DefaultTimeout = 2 * time.Minute

// maxAnswer caps how much of an answer is read: a completion is a few KB, and
// a misconfigured baseUrl must not stream a download into memory.
const maxAnswer = 8 << 20

// maxServerMessage caps a server's error message passed on to a caller.
const maxServerMessage = 500

// Model is one chat-completions model at one endpoint. It is safe for
// concurrent use.
type Model struct {
	endpoint string // {baseURL}/chat/completions
	where    string // baseURL without credentials, for messages
	apiKey   string
	model    string
	hc       *http.Client
	now      func() time.Time // reads Retry-After dates
	retry    modelretry.Policy
}

var _ sb.Model = (*Model)(nil)

// New returns the model named model at baseURL (for example
// http://127.0.0.1:11434/v1 for Ollama, https://api.openai.com/v1 for
// OpenAI). apiKey may be empty (a local Ollama needs none); then no
// Authorization header is sent. hc nil means a client with DefaultTimeout.
// Returns EINVALID when baseURL is not an http(s) URL or model is empty.
func New(baseURL, apiKey, model string, hc *http.Client) (*Model, error) {
	const op = "openai.new"
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, sb.E(op, sb.EINVALID, fmt.Sprintf("model.baseUrl %q is not an http(s) URL; use e.g. http://127.0.0.1:11434/v1", redactURL(baseURL)))
	}
	if strings.TrimSpace(model) == "" {
		return nil, sb.E(op, sb.EINVALID, "model.model is empty; name the model to use, e.g. gpt-4o-mini or llama3.1")
	}
	if hc == nil {
		hc = &http.Client{Timeout: DefaultTimeout}
	}
	// A query (Azure's ?api-version=…) stays on the endpoint but out of
	// messages.
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath, u.Fragment = "", ""
	where := *u
	where.User, where.RawQuery = nil, ""
	endpoint := *u
	endpoint.Path += "/chat/completions"
	return &Model{
		endpoint: endpoint.String(),
		where:    where.String(),
		apiKey:   apiKey,
		model:    model,
		hc:       hc,
		now:      time.Now,
		retry:    modelretry.Default(),
	}, nil
}

// WithRetry returns a copy of m that retries by p (modelretry.Default()
// unless changed; MaxAttempts 1 turns retries off).
func (m *Model) WithRetry(p modelretry.Policy) *Model {
	c := *m
	c.retry = p
	if p.Now != nil {
		c.now = p.Now
	}
	return &c
}

// String describes the model without its API key, so that printing a Model
// by mistake cannot leak it.
func (m *Model) String() string { return fmt.Sprintf("openai model %q at %s", m.model, m.where) }

// GoString is String, for %#v.
func (m *Model) GoString() string { return m.String() }

// Complete implements sb.Model. Errors: EUNAUTHORIZED when the server
// refuses the key (401/403); ENOTFOUND when it does not know the model or the
// path (404); ERATELIMITED with RetryAfter (429); EUNAVAILABLE for 5xx,
// timeouts and unreachable servers; EINVALID for other 4xx (with the
// server's message) and for tools whose names a model cannot accept;
// EINTERNAL when the answer is not a chat completion.
//
// 429, 5xx, timeouts and unreachable servers are retried by the model's
// retry policy within ctx's deadline; when it gives up the error is
// EUNAVAILABLE and says after how many attempts.
func (m *Model) Complete(ctx context.Context, req sb.ModelRequest) (sb.ModelResponse, error) {
	const op = "openai.complete"
	body, err := m.toRequest(req)
	if err != nil {
		return sb.ModelResponse{}, err
	}
	var raw bytes.Buffer
	enc := json.NewEncoder(&raw)
	enc.SetEscapeHTML(false) // keeps <untrusted_content> readable on the wire
	if err := enc.Encode(body); err != nil {
		return sb.ModelResponse{}, sb.Wrap(op, sb.EINVALID, "the request to the model cannot be encoded as JSON; check the tools' parameter schemas", err)
	}
	resp, _, err := modelretry.Do(ctx, m.retry, op, func(ctx context.Context) (sb.ModelResponse, error) {
		return m.post(ctx, op, raw.Bytes(), len(req.Messages))
	})
	return resp, err
}

// post makes one attempt: one POST, one answer.
func (m *Model) post(ctx context.Context, op string, body []byte, sent int) (sb.ModelResponse, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, m.endpoint, bytes.NewReader(body))
	if err != nil {
		return sb.ModelResponse{}, sb.Wrap(op, sb.EINTERNAL, "the model request could not be built", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	if m.apiKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+m.apiKey)
	}
	resp, err := m.hc.Do(hreq)
	if err != nil {
		return sb.ModelResponse{}, m.transportError(op, err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return sb.ModelResponse{}, m.transportError(op, err)
	}
	if resp.StatusCode/100 != 2 {
		return sb.ModelResponse{}, m.statusError(op, resp, answer)
	}
	var cr chatResponse
	if err := json.Unmarshal(answer, &cr); err != nil {
		return sb.ModelResponse{}, sb.Wrap(op, sb.EINTERNAL,
			fmt.Sprintf("the server at %s did not answer like an OpenAI-compatible chat-completions API; check model.baseUrl (it usually ends in /v1)", m.where), err)
	}
	if len(cr.Choices) == 0 {
		msg := fmt.Sprintf("the model server at %s answered without a choice", m.where)
		if s := m.serverMessage(answer); s != "" {
			msg += ": " + s
		}
		return sb.ModelResponse{}, sb.E(op, sb.EINTERNAL, msg)
	}
	return fromResponse(cr, sent), nil
}

// transportError maps a failure to reach the server or read its answer.
func (m *Model) transportError(op string, err error) error {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return sb.Wrap(op, sb.EUNAVAILABLE, fmt.Sprintf("the model server at %s did not answer in time; try again later or use a faster model", m.where), err)
	}
	if errors.Is(err, context.Canceled) {
		return sb.Wrap(op, sb.EUNAVAILABLE, "the model request was cancelled", err)
	}
	return sb.Wrap(op, sb.EUNAVAILABLE, fmt.Sprintf("cannot reach the model server at %s; check model.baseUrl and that the server is running", m.where), err)
}

// statusError maps a non-2xx answer, one table for every OpenAI-compatible
// server. 401/403 never pass the server's text on: OpenAI echoes part of the
// key there ("Incorrect API key provided: sk-ab***yz").
func (m *Model) statusError(op string, resp *http.Response, body []byte) error {
	status := resp.StatusCode
	detail := m.serverMessage(body)
	cause := fmt.Errorf("POST %s/chat/completions: HTTP %d: %s", m.where, status, detail)
	withDetail := func(s string) string {
		if detail != "" {
			return s + ": " + detail
		}
		return s
	}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return sb.Wrap(op, sb.EUNAUTHORIZED, fmt.Sprintf("the model server at %s refused the credentials (HTTP %d); check model.apiKey", m.where, status),
			fmt.Errorf("POST %s/chat/completions: HTTP %d", m.where, status))
	case status == http.StatusNotFound:
		return sb.Wrap(op, sb.ENOTFOUND, fmt.Sprintf("model %q not found at %s (HTTP 404); check model.model and model.baseUrl (it usually ends in /v1)", m.model, m.where), cause)
	case status == http.StatusTooManyRequests:
		e := sb.Wrap(op, sb.ERATELIMITED, withDetail(fmt.Sprintf("the model server at %s is rate limiting (HTTP 429); retry later", m.where)), cause)
		e.RetryAfter = retryafter.Parse(resp.Header.Get("Retry-After"), m.now())
		return e
	case status == http.StatusRequestTimeout || status >= 500:
		e := sb.Wrap(op, sb.EUNAVAILABLE, withDetail(fmt.Sprintf("the model server at %s failed (HTTP %d); try again later", m.where, status)), cause)
		e.RetryAfter = retryafter.Parse(resp.Header.Get("Retry-After"), m.now())
		return e
	default:
		return sb.Wrap(op, sb.EINVALID, withDetail(fmt.Sprintf("the model server at %s rejected the request (HTTP %d)", m.where, status)), cause)
	}
}

// serverMessage digs the human message out of an error body in the shapes
// compatible servers use: OpenAI and Ollama {"error":{"message":…}}, Ollama's
// native {"error":"…"}, older vLLM {"object":"error","message":…}. The API
// key is masked and the text capped; a body that is none of these (an HTML
// error page) yields "".
func (m *Model) serverMessage(body []byte) string {
	var e struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	msg := e.Message
	var obj struct {
		Message string `json:"message"`
	}
	var s string
	switch {
	case json.Unmarshal(e.Error, &obj) == nil && obj.Message != "":
		msg = obj.Message
	case json.Unmarshal(e.Error, &s) == nil && s != "":
		msg = s
	}
	if m.apiKey != "" {
		msg = strings.ReplaceAll(msg, m.apiKey, "[redacted]")
	}
	msg = strings.TrimSpace(msg)
	if len(msg) > maxServerMessage {
		msg = msg[:maxServerMessage] + "…"
	}
	return msg
}

// redactURL shows a URL without user info, for messages about a bad one.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		if i := strings.Index(s, "@"); i >= 0 {
			return "…" + s[i:]
		}
		return s
	}
	u.User = nil
	return u.String()
}

// checkTools rejects, before any network call, a tool action whose function
// name the API would refuse: the whole request would fail with a less clear
// 400 otherwise.
func checkTools(op string, tools []sb.ToolSpec) error {
	for _, t := range tools {
		for _, a := range t.Actions {
			if err := sb.CheckFunctionName(t.Name, a.Name); err != nil {
				return sb.Wrap(op, sb.EINVALID, fmt.Sprintf("%s.%s cannot be offered to the model: %v", t.Name, a.Name, err), err)
			}
		}
	}
	return nil
}
