package console_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdaurl"

	"github.com/switchboard-dev/switchboard/shared/httpapi"
	"github.com/switchboard-dev/switchboard/shared/httpapi/console"
	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
)

// TestLoginBehindAFunctionURL logs in through function URL events, whose
// cookies come in the event's cookies list and not in a Cookie header.
func TestLoginBehindAFunctionURL(t *testing.T) {
	e := newEnv(t, nil)
	h, err := console.New(e.opts)
	if err != nil {
		t.Fatal(err)
	}
	routes, err := httpapi.Routes(map[string]http.Handler{"console": h})
	if err != nil {
		t.Fatal(err)
	}
	fn := lambdaurl.Wrap(httpapi.Serve(routes, slog.New(slog.DiscardHandler), scrub.New(nil)))
	const domain = "abcdefghijklmnopqrstuvwxyz012345.lambda-url.eu-central-1.on.aws"
	jar := map[string]string{}
	call := func(method, path, body string) (int, string, http.Header) {
		t.Helper()
		req := &events.LambdaFunctionURLRequest{RawPath: path, Body: body,
			Headers: map[string]string{"host": domain, "origin": "https://" + domain, "sec-fetch-site": "same-origin"}}
		if body != "" {
			req.Headers["content-type"] = "application/x-www-form-urlencoded"
		}
		for k, v := range jar {
			req.Cookies = append(req.Cookies, k+"="+v)
		}
		req.RequestContext.DomainName = domain
		req.RequestContext.HTTP.Method = method
		req.RequestContext.HTTP.Path = path
		req.RequestContext.HTTP.SourceIP = "203.0.113.7"
		res, err := fn(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		hdr := http.Header{}
		for k, v := range res.Headers {
			hdr.Set(k, v)
		}
		for _, c := range res.Cookies {
			ck, err := http.ParseSetCookie(c)
			if err != nil {
				t.Fatalf("Set-Cookie %q: %v", c, err)
			}
			if !ck.Secure || !ck.HttpOnly {
				t.Errorf("cookie %s behind a function URL: Secure %v, HttpOnly %v", ck.Name, ck.Secure, ck.HttpOnly)
			}
			jar[ck.Name] = ck.Value
			if ck.MaxAge < 0 {
				delete(jar, ck.Name)
			}
		}
		return res.StatusCode, string(b), hdr
	}
	status, body, _ := call("GET", "/console/login", "")
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(body)
	if status != 200 || m == nil {
		t.Fatalf("login form: %d\n%s", status, body)
	}
	status, body, hdr := call("POST", "/console/login", url.Values{"csrf": {m[1]}, "password": {password}}.Encode())
	if status != http.StatusSeeOther || hdr.Get("Location") != "/console/" {
		t.Fatalf("login: %d to %q, want 303 to /console/\n%s", status, hdr.Get("Location"), body)
	}
	if status, body, _ = call("GET", "/console/health", ""); status != 200 || !strings.Contains(body, "Scheduled jobs") {
		t.Errorf("a page after login: %d\n%s", status, body)
	}
}
