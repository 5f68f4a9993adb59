package nextcloud

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/retryafter"
	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

// httpError is what Nextcloud (or the network) answered, kept as the cause
// of a *switchboard.Error for logs and for HTTPStatus/OCSStatus/Endpoint.
type httpError struct {
	Method     string
	Endpoint   string // escaped path below the installation, no query, no credentials
	OCS        bool
	Status     int    // HTTP status; 0 when no response arrived
	OCSStatus  int    // meta.statuscode of an OCS envelope; 0 when none
	Exception  string // Sabre s:exception class
	Message    string // s:message or meta.message: server text, for logs only
	RetryAfter time.Duration
	Err        error // transport failure, or why the answer could not be read
	// Undecodable marks a 2xx answer whose body this client could not read.
	Undecodable bool
}

func (e *httpError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "nextcloud %s %s", e.Method, e.Endpoint)
	if e.Status != 0 {
		fmt.Fprintf(&b, ": HTTP %d", e.Status)
	}
	if e.OCSStatus != 0 {
		fmt.Fprintf(&b, " OCS %d", e.OCSStatus)
	}
	if e.Exception != "" {
		b.WriteString(" " + e.Exception)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.Err != nil {
		b.WriteString(": " + e.Err.Error())
	}
	return b.String()
}

func (e *httpError) Unwrap() error { return e.Err }

// RemoteStatus, RemoteEndpoint and RemoteCode make httpError a
// switchboard.RemoteFailure: the tools read what Nextcloud answered through
// the domain, not this package.
func (e *httpError) RemoteStatus() int      { return e.Status }
func (e *httpError) RemoteEndpoint() string { return e.Endpoint }
func (e *httpError) RemoteCode() int        { return e.OCSStatus }

var _ switchboard.RemoteFailure = (*httpError)(nil)

// Facts the mapping relies on.
const (
	// Sabre's s:exception for a file held open by Collabora / another client
	// (apps/dav/lib/Connector/Sabre/Exception/FileLocked.php).
	exceptionFileLocked = `OCA\DAV\Connector\Sabre\Exception\FileLocked`
	// OCS "not authorised": a regular account calling an admin endpoint (or,
	// rarely, bad credentials on an OCS route).
	ocsUnauthorised = 997
	ocsNotFound     = 998
	ocsServerError  = 996
	ocsUnknownError = 999
)

// ops that need a share-specific reading of the server's answer.
const (
	opCreateShare = "nextcloud.share"
)

// classify is the one place that maps Nextcloud's answers to the domain
// vocabulary. Messages say what happened and what to do; server text stays
// in the cause for the logs.
func classify(op string, he *httpError) error {
	wrap := func(code, msg string) error { return switchboard.Wrap(op, code, msg, he) }

	if he.Undecodable {
		return wrap(switchboard.EINTERNAL, "Nextcloud sent an answer this client cannot read; the operator can find details in the logs")
	}
	if he.Status == 0 && he.OCSStatus == 0 {
		if errors.Is(he.Err, errShortBody) {
			return wrap(switchboard.EINVALID, "the upload ended before its announced size; the local file changed or the size is wrong — check it and upload again")
		}
		if errors.Is(he.Err, context.Canceled) {
			return wrap(switchboard.EUNAVAILABLE, "the Nextcloud request was cancelled before it finished; try again")
		}
		if errors.Is(he.Err, context.DeadlineExceeded) {
			return wrap(switchboard.EUNAVAILABLE, "Nextcloud did not answer in time; try again later")
		}
		return wrap(switchboard.EUNAVAILABLE, "Nextcloud is unreachable; check baseUrl and try again later")
	}

	// OCS status codes carry the meaning; the HTTP status may be 200 (v1).
	switch he.OCSStatus {
	case ocsUnauthorised:
		return wrap(switchboard.EFORBIDDEN, "needs admin rights: Nextcloud refused this request (OCS 997); the account is not allowed to do this — ask an admin, or if every Nextcloud call fails this way, check username and appPassword")
	case ocsNotFound:
		return wrap(switchboard.ENOTFOUND, "this Nextcloud does not offer the endpoint (OCS 998); the app behind it is probably disabled — check capabilities")
	case ocsServerError:
		return wrap(switchboard.EUNAVAILABLE, "Nextcloud failed with a server error (OCS 996); try again later")
	case ocsUnknownError:
		return wrap(switchboard.EINTERNAL, "Nextcloud could not complete the request (OCS 999); the operator can find details in the logs")
	}
	status := he.Status
	if he.OCSStatus >= 400 && he.OCSStatus < 600 {
		status = he.OCSStatus // v1 answers HTTP 200 for every failure
	} else if he.OCSStatus != 0 && he.OCSStatus != 100 && he.OCSStatus != 200 && status/100 == 2 {
		return wrap(switchboard.EINTERNAL, fmt.Sprintf("Nextcloud answered with OCS status %d; the operator can find details in the logs", he.OCSStatus))
	}
	lower := strings.ToLower(he.Message)

	switch {
	case status == http.StatusUnauthorized:
		return wrap(switchboard.EUNAUTHORIZED, "Nextcloud rejected the credentials; check username and appPassword (app passwords can be revoked under Settings → Security)")
	case status == http.StatusForbidden:
		if op == opCreateShare && strings.Contains(lower, "password") {
			return wrap(switchboard.EFORBIDDEN, "the server requires a password for public links; pass a password (or let the tool generate one) and try again")
		}
		return wrap(switchboard.EFORBIDDEN, "Nextcloud refused the action: the account lacks permission for this path or the server forbids it; pick another path or ask an admin")
	case status == http.StatusNotFound:
		if op == opCreateShare {
			switch {
			case strings.Contains(lower, "disabled"):
				return wrap(switchboard.EFORBIDDEN, "public links are disabled on this Nextcloud; share with a user or group instead")
			case strings.Contains(lower, "expir"):
				return wrap(switchboard.EINVALID, "Nextcloud refused the expiry date (in the past or beyond the server's maximum); pick a date within files_sharing.public.expire_date.days from capabilities")
			case strings.Contains(lower, "account") || strings.Contains(lower, "user") || strings.Contains(lower, "group") || strings.Contains(lower, "recipient"):
				return wrap(switchboard.ENOTFOUND, "Nextcloud knows no such user or group to share with; check the name (user search shows valid accounts)")
			}
		}
		return wrap(switchboard.ENOTFOUND, "not found on Nextcloud: the file or folder does not exist; list the parent folder to check the name")
	case status == http.StatusMethodNotAllowed:
		return wrap(switchboard.ECONFLICT, "Nextcloud does not allow this on the target (it may already exist or be of the wrong kind); list the parent folder to check")
	case status == http.StatusConflict:
		return wrap(switchboard.ECONFLICT, "the parent folder does not exist on Nextcloud (or the target conflicts with the source); create the folder first")
	case status == http.StatusPreconditionFailed && he.OCS:
		return wrap(switchboard.EINVALID, "Nextcloud's CSRF check refused the OCS request (header OCS-APIRequest: true missing); this is a client bug — report it")
	case status == http.StatusPreconditionFailed:
		return wrap(switchboard.ECONFLICT, "the destination already exists and overwrite is off; choose another name or allow overwriting")
	case status == http.StatusLocked:
		if he.Exception == exceptionFileLocked || he.Exception == "" {
			return wrap(switchboard.ECONFLICT, "file is open/locked (probably in Collabora); close it there or save under a new name (a timestamped one), then try again")
		}
		return wrap(switchboard.ECONFLICT, "file is locked by another WebDAV client; try again later or save under a new name")
	case status == http.StatusInsufficientStorage:
		return wrap(switchboard.EFORBIDDEN, "quota exceeded: the Nextcloud account has no space left for this; delete files it no longer needs (files in the trash no longer count), or ask an admin for more quota")
	case status == http.StatusTooManyRequests:
		msg := "Nextcloud is rate-limiting this account (share creation allows 20 per 10 minutes)"
		if he.RetryAfter > 0 {
			msg += fmt.Sprintf("; wait %s before trying again", he.RetryAfter.Round(time.Second))
		} else {
			msg += "; wait a few minutes before trying again"
		}
		err := wrap(switchboard.ERATELIMITED, msg+" — report the wait instead of retrying now")
		err.(*switchboard.Error).RetryAfter = he.RetryAfter
		return err
	case status == http.StatusBadRequest || status == http.StatusRequestEntityTooLarge || status == http.StatusUnsupportedMediaType:
		return wrap(switchboard.EINVALID, fmt.Sprintf("Nextcloud rejected the request as invalid (HTTP %d); check the name, size and arguments", status))
	case status >= 500:
		err := wrap(switchboard.EUNAVAILABLE, fmt.Sprintf("Nextcloud is unavailable (HTTP %d, maintenance or overload); try again later", status))
		err.(*switchboard.Error).RetryAfter = he.RetryAfter
		return err
	}
	return wrap(switchboard.EINTERNAL, fmt.Sprintf("Nextcloud answered HTTP %d unexpectedly; the operator can find details in the logs", status))
}

// sabreError is Sabre's error body.
type sabreError struct {
	XMLName   xml.Name `xml:"DAV: error"`
	Exception string   `xml:"http://sabredav.org/ns exception"`
	Message   string   `xml:"http://sabredav.org/ns message"`
}

// readHTTPError collects the facts of a failed response: Sabre XML, an OCS
// envelope, or the bare CSRF JSON.
func readHTTPError(rq *request, resp *http.Response) *httpError {
	he := &httpError{Method: rq.method, Endpoint: rq.endpoint(), OCS: rq.ocs, Status: resp.StatusCode,
		RetryAfter: retryafter.Parse(resp.Header.Get("Retry-After"), time.Now())}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var se sabreError
	if xml.Unmarshal(raw, &se) == nil {
		he.Exception, he.Message = strings.TrimSpace(se.Exception), strings.TrimSpace(se.Message)
		return he
	}
	var env ocsEnvelope
	if json.Unmarshal(raw, &env) == nil && env.OCS.Meta.StatusCode != 0 {
		he.OCSStatus, he.Message = int(env.OCS.Meta.StatusCode), env.OCS.Meta.Message
		return he
	}
	var bare struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &bare) == nil {
		he.Message = bare.Message
	}
	return he
}
