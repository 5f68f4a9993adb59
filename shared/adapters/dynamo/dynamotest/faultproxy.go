package dynamotest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// FaultProxy is a reverse proxy on loopback in front of a DynamoDB API
// server (dynalite) that injects the faults DynamoDB shows under load:
// ProvisionedThroughputExceededException answers and requests that hang.
// A throttled request never reaches the server, as in DynamoDB, where a
// throttled write is not applied.
type FaultProxy struct {
	URL string

	srv   *httptest.Server
	proxy *httputil.ReverseProxy

	mu       sync.Mutex
	throttle Throttle
	seen     map[[32]byte]int // body digest → times throttled (Throttle.PerRequest)
	hang     chan struct{}    // non-nil while requests hang; closed to release them
	apply    bool             // held requests reach the server even if their client gave up
	stats    FaultStats
}

// Throttle says which requests get ProvisionedThroughputExceededException.
// The zero value throttles nothing.
type Throttle struct {
	// Ops limits throttling to these operations (the part of X-Amz-Target
	// after the dot: "PutItem", "GetItem" …); empty means every operation.
	Ops []string
	// Next throttles the next n matching requests.
	Next int
	// Fraction throttles each matching request with this probability.
	Fraction float64
	// PerRequest throttles every distinct request (by body; the SDK's
	// retries resend the same body) this many times and then lets it
	// through: with PerRequest below the SDK's attempts, every call succeeds
	// after retries.
	PerRequest int
}

// FaultStats counts what the proxy saw.
type FaultStats struct {
	Requests  int            // every request, throttled and hung ones included
	Throttled int            // answered ProvisionedThroughputExceededException
	Hung      int            // held until released or abandoned by the client
	ByOp      map[string]int // requests per operation
}

// NewFaultProxy starts a proxy in front of target (an endpoint URL); it
// stops when the test ends.
func NewFaultProxy(t testing.TB, target string) *FaultProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatalf("dynamotest: fault proxy target %q: %v", target, err)
	}
	p := &FaultProxy{proxy: httputil.NewSingleHostReverseProxy(u), seen: map[[32]byte]int{}}
	p.stats.ByOp = map[string]int{}
	p.proxy.ErrorLog = nil
	p.proxy.ErrorHandler = func(w http.ResponseWriter, r *http.Request, err error) {
		w.WriteHeader(http.StatusBadGateway) // the client went away or the server is gone
	}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	p.URL = p.srv.URL
	t.Cleanup(func() {
		p.Hang(false)
		p.srv.Close()
	})
	return p
}

// SetThrottle replaces the throttling rule.
func (p *FaultProxy) SetThrottle(th Throttle) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.throttle = th
	p.seen = map[[32]byte]int{}
}

// Hang makes every request wait (true) until Hang(false) or the client
// gives up, like a DynamoDB endpoint that accepts connections and never
// answers.
func (p *FaultProxy) Hang(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case on && p.hang == nil:
		p.hang = make(chan struct{})
	case !on && p.hang != nil:
		close(p.hang)
		p.hang = nil
	}
}

// ApplyAbandoned makes a held request reach the server when the hang ends
// even if its client gave up meanwhile (its answer goes nowhere), like a
// DynamoDB write that was applied although the client timed out.
func (p *FaultProxy) ApplyAbandoned(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.apply = on
}

// Stats returns a copy of the counts so far.
func (p *FaultProxy) Stats() FaultStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.stats
	s.ByOp = make(map[string]int, len(p.stats.ByOp))
	for k, v := range p.stats.ByOp {
		s.ByOp[k] = v
	}
	return s
}

func (p *FaultProxy) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	op := r.Header.Get("X-Amz-Target")
	if i := strings.LastIndexByte(op, '.'); i >= 0 {
		op = op[i+1:]
	}

	p.mu.Lock()
	p.stats.Requests++
	p.stats.ByOp[op]++
	hang, apply := p.hang, p.apply
	if hang != nil {
		p.stats.Hung++
	}
	throttled := hang == nil && p.shouldThrottle(op, body)
	if throttled {
		p.stats.Throttled++
	}
	p.mu.Unlock()

	if hang != nil {
		select {
		case <-hang:
		case <-r.Context().Done():
			if !apply {
				return
			}
			<-hang
			r = r.WithContext(context.WithoutCancel(r.Context()))
		}
	}
	if throttled {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.Header().Set("x-amzn-RequestId", fmt.Sprintf("FAULTPROXY%016x", rand.Uint64()))
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"__type":"com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",`+
			`"message":"The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API."}`)
		return
	}
	p.proxy.ServeHTTP(w, r)
}

// shouldThrottle applies the rule to one request; p.mu is held.
func (p *FaultProxy) shouldThrottle(op string, body []byte) bool {
	th := &p.throttle
	if len(th.Ops) > 0 {
		match := false
		for _, o := range th.Ops {
			match = match || o == op
		}
		if !match {
			return false
		}
	}
	switch {
	case th.Next > 0:
		th.Next--
		return true
	case th.PerRequest > 0:
		sum := sha256.Sum256(body)
		if p.seen[sum] < th.PerRequest {
			p.seen[sum]++
			return true
		}
		return false
	case th.Fraction > 0:
		return rand.Float64() < th.Fraction
	}
	return false
}
