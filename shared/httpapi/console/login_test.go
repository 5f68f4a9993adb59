package console_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdaurl"

	"github.com/switchboard-dev/switchboard/shared/httpapi"
	"github.com/switchboard-dev/switchboard/shared/httpapi/console"
	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
)

// loginFrom opens the login form and sends password from ip, the TCP peer
// as the dev listener sees it (the client address of a login).
func (e *env) loginFrom(ip, pw string) *http.Response {
	e.t.Helper()
	peer := net.JoinHostPort(ip, "40000")
	form := httptest.NewRequest(http.MethodGet, "http://127.0.0.1/console/login", nil)
	form.RemoteAddr = peer
	rec := httptest.NewRecorder()
	e.handler.ServeHTTP(rec, form)
	if rec.Code != http.StatusOK {
		e.t.Fatalf("login form from %s: %d", ip, rec.Code)
	}
	tok := csrfOf(e.t, rec.Body.String())
	post := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/console/login",
		strings.NewReader(url.Values{"csrf": {tok}, "password": {pw}}.Encode()))
	post.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for _, ck := range rec.Result().Cookies() {
		post.AddCookie(ck)
	}
	post.RemoteAddr = peer
	rec = httptest.NewRecorder()
	e.handler.ServeHTTP(rec, post)
	return rec.Result()
}

// expectLogin checks the status of a login from ip; a 429 must say when to
// come back.
func (e *env) expectLogin(ip, pw string, want int) {
	e.t.Helper()
	res := e.loginFrom(ip, pw)
	body, _ := io.ReadAll(res.Body)
	which := "a wrong password"
	if pw == password {
		which = "the right password"
	}
	if res.StatusCode != want {
		e.t.Fatalf("%s from %s: %d, want %d\n%s", which, ip, res.StatusCode, want, body)
	}
	if want == http.StatusTooManyRequests && res.Header.Get("Retry-After") == "" {
		e.t.Errorf("%s from %s: 429 without Retry-After", which, ip)
	}
	if got := len(sessionCookies(res)) == 1; got != (want == http.StatusSeeOther) {
		e.t.Errorf("%s from %s: %d session cookies with status %d", which, ip, len(sessionCookies(res)), res.StatusCode)
	}
}

// TestOthersFailuresNeverRefuseTheRightPassword is the attack run: 100
// wrong passwords from 10 addresses spend the window's total; the owner's
// right password from a fresh address still logs in, and only the wrong
// ones are refused from then on.
func TestOthersFailuresNeverRefuseTheRightPassword(t *testing.T) {
	e := newEnv(t, nil)
	for a := range 10 {
		for range 10 {
			e.expectLogin(fmt.Sprintf("127.0.0.%d", 10+a), "a wrong guess", http.StatusUnauthorized)
		}
	}
	e.expectLogin("127.0.0.99", password, http.StatusSeeOther)
	e.expectLogin("127.0.0.98", "another guess", http.StatusTooManyRequests)
	// While the total is spent, a client has 3 failures instead of 10: a
	// guesser with many addresses gets fewer guesses from each, and the
	// owner who mistypes twice still gets in.
	for range 3 {
		e.expectLogin("127.0.0.97", "guess", http.StatusTooManyRequests)
	}
	e.expectLogin("127.0.0.97", password, http.StatusTooManyRequests)
	e.expectLogin("127.0.0.96", "typo", http.StatusTooManyRequests)
	e.expectLogin("127.0.0.96", "typo 2", http.StatusTooManyRequests)
	e.expectLogin("127.0.0.96", password, http.StatusSeeOther)
	// The next window starts afresh.
	e.clock.Add(15 * time.Minute)
	e.expectLogin("127.0.0.10", "a wrong guess", http.StatusUnauthorized)
	e.expectLogin("127.0.0.97", password, http.StatusSeeOther)
}

// TestRightPasswordsSpendNoAttempts: logging in neither uses up the
// client's attempts nor the window's total.
func TestRightPasswordsSpendNoAttempts(t *testing.T) {
	e := newEnv(t, nil)
	for range 12 {
		e.expectLogin("127.0.0.5", password, http.StatusSeeOther)
	}
	for range 10 {
		e.expectLogin("127.0.0.5", "wrong", http.StatusUnauthorized)
	}
	e.expectLogin("127.0.0.5", password, http.StatusTooManyRequests)

	// With those 10, 95 failures; then 20 logins, and the total still has
	// 5 failures left.
	for i := range 85 {
		e.expectLogin(fmt.Sprintf("127.0.1.%d", i/9), "wrong", http.StatusUnauthorized)
	}
	for i := range 20 {
		e.expectLogin(fmt.Sprintf("127.0.2.%d", i), password, http.StatusSeeOther)
	}
	for i := range 5 {
		e.expectLogin(fmt.Sprintf("127.0.3.%d", i), "wrong", http.StatusUnauthorized)
	}
	e.expectLogin("127.0.3.9", "wrong", http.StatusTooManyRequests)
}

// TestClientsAreIPv4AddressesAndIPv6Slash64s: an IPv6 host has a whole
// /64 to pick addresses from, so the /64 is the client; an IPv4 address
// is one client however it is written.
func TestClientsAreIPv4AddressesAndIPv6Slash64s(t *testing.T) {
	e := newEnv(t, nil)
	for i := range 10 {
		e.expectLogin(fmt.Sprintf("2001:db8:1:2::%x", i+1), "wrong", http.StatusUnauthorized)
	}
	e.expectLogin("2001:db8:1:2:ffff:ffff:ffff:fffe", password, http.StatusTooManyRequests)
	e.expectLogin("2001:db8:1:3::1", password, http.StatusSeeOther)

	for range 10 {
		e.expectLogin("::ffff:192.0.2.7", "wrong", http.StatusUnauthorized)
	}
	e.expectLogin("192.0.2.7", password, http.StatusTooManyRequests)
	e.expectLogin("192.0.2.8", password, http.StatusSeeOther)
}

// TestConcurrentGuessesGetTheClientsTenAttempts: attempts are counted
// before the password is checked, so a burst gets no more than 10 tries.
func TestConcurrentGuessesGetTheClientsTenAttempts(t *testing.T) {
	e := newEnv(t, nil)
	var mu sync.Mutex
	got := map[int]int{}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			res := e.loginFrom("127.0.0.8", fmt.Sprint("guess ", i))
			mu.Lock()
			got[res.StatusCode]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if got[http.StatusUnauthorized] != 10 || got[http.StatusTooManyRequests] != 10 {
		t.Errorf("20 concurrent guesses from one address: %v, want 10 × 401 and 10 × 429", got)
	}
}

// TestFunctionURLClientIsTheSourceIP: behind a function URL the client is
// the source IP AWS saw; an X-Forwarded-For the caller writes changes
// nothing.
func TestFunctionURLClientIsTheSourceIP(t *testing.T) {
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
	call := func(sourceIP, forwardedFor, pw string) int {
		t.Helper()
		ev := func(method, body string, cookies []string) *events.LambdaFunctionURLRequest {
			req := &events.LambdaFunctionURLRequest{RawPath: "/console/login", Body: body, Cookies: cookies,
				Headers: map[string]string{"host": domain, "x-forwarded-for": forwardedFor}}
			if body != "" {
				req.Headers["content-type"] = "application/x-www-form-urlencoded"
			}
			req.RequestContext.DomainName = domain
			req.RequestContext.HTTP.Method = method
			req.RequestContext.HTTP.Path = "/console/login"
			req.RequestContext.HTTP.SourceIP = sourceIP
			return req
		}
		res, err := fn(context.Background(), ev("GET", "", nil))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		var cookies []string
		for _, c := range res.Cookies {
			cookies = append(cookies, strings.SplitN(c, ";", 2)[0])
		}
		form := url.Values{"csrf": {csrfOf(t, string(b))}, "password": {pw}}.Encode()
		res, err = fn(context.Background(), ev("POST", form, cookies))
		if err != nil {
			t.Fatal(err)
		}
		return res.StatusCode
	}
	for i := range 10 {
		if got := call("203.0.113.7", fmt.Sprintf("198.51.100.%d", i), "wrong"); got != http.StatusUnauthorized {
			t.Fatalf("guess %d: %d, want 401", i+1, got)
		}
	}
	if got := call("203.0.113.7", "198.51.100.200", password); got != http.StatusTooManyRequests {
		t.Errorf("a fresh X-Forwarded-For from a spent source IP: %d, want 429", got)
	}
	if got := call("2001:db8:5:6::1", "", password); got != http.StatusSeeOther {
		t.Errorf("another source IP: %d, want 303", got)
	}
}
