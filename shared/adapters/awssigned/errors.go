package awssigned

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// APIError is an AWS answer other than 2xx: its status, the service's
// error code (ThrottlingException, ResourceNotFoundException, NoSuchKey, …;
// "" when the answer named none, as a proxy's 502 or a HEAD answer does),
// its message and request id. Its text is the SDK's.
type APIError struct {
	Status    int
	Code      string
	Message   string
	RequestID string
}

func (e *APIError) Error() string {
	code := e.Code
	if code == "" {
		code = http.StatusText(e.Status)
	}
	return fmt.Sprintf("https response error StatusCode: %d, RequestID: %s, api error %s: %s", e.Status, e.RequestID, code, e.Message)
}

// ErrorCode is the error code, as the SDK's API errors name it.
func (e *APIError) ErrorCode() string { return e.Code }

// SendError is a request that got no answer: the connection, the deadline,
// credentials or signing.
type SendError struct{ Err error }

func (e *SendError) Error() string { return "request send failed: " + e.Err.Error() }
func (e *SendError) Unwrap() error { return e.Err }

// ReadJSONError reads the error answer of an AWS JSON or restJson1 API:
// the code in the X-Amzn-ErrorType header or the body's __type or code,
// possibly as namespace#Code or Code:uri; the message in message or
// Message.
func ReadJSONError(status int, header http.Header, body []byte) *APIError {
	var doc struct {
		Type     string `json:"__type"`
		Code     string `json:"code"`
		Message  string `json:"message"`
		MessageU string `json:"Message"`
	}
	_ = json.Unmarshal(body, &doc)
	code := firstOf(header.Get("X-Amzn-ErrorType"), doc.Type, doc.Code)
	if i := strings.IndexByte(code, ':'); i >= 0 {
		code = code[:i]
	}
	if i := strings.LastIndexByte(code, '#'); i >= 0 {
		code = code[i+1:]
	}
	return &APIError{Status: status, Code: code, Message: firstOf(doc.Message, doc.MessageU),
		RequestID: header.Get("X-Amzn-Requestid")}
}

// Throttling says whether code is one the SDK's retryer treats as
// throttling (retry.DefaultThrottleErrorCodes, S3's SlowDown among them).
func Throttling(code string) bool { return throttleCodes[code] }

var throttleCodes = map[string]bool{
	"Throttling": true, "ThrottlingException": true, "ThrottledException": true,
	"RequestThrottledException": true, "TooManyRequestsException": true,
	"ProvisionedThroughputExceededException": true, "TransactionInProgressException": true,
	"RequestLimitExceeded": true, "BandwidthLimitExceeded": true, "LimitExceededException": true,
	"RequestThrottled": true, "SlowDown": true, "PriorRequestNotComplete": true,
	"EC2ThrottledException": true,
}

// Escape percent-encodes s as SigV4 signs a path: every byte but the
// unreserved characters and those in keep ("/" for an S3 key, "" for a
// path label such as an ARN).
func Escape(s, keep string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if 'A' <= ch && ch <= 'Z' || 'a' <= ch && ch <= 'z' || '0' <= ch && ch <= '9' || strings.IndexByte("-_.~", ch) >= 0 || strings.IndexByte(keep, ch) >= 0 {
			b.WriteByte(ch)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", ch)
	}
	return b.String()
}

func firstOf(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}
