package runtoken_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"github.com/switchboard-dev/switchboard/shared/platform/runtoken"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

const secret = "test-approval-signing-key-0001"

var t0 = time.Date(2026, 12, 2, 10, 15, 0, 0, time.UTC)

// fakeClock is a settable clock.
type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time { return c.now }

func keys(t *testing.T, secret string, clock *fakeClock) *runtoken.Keys {
	t.Helper()
	k, err := runtoken.New(secret)
	if err != nil {
		t.Fatal(err)
	}
	k.Now = clock.Now
	return k
}

// hermesRun has every field set, so that the round trip shows each one
// (a task's run: two hand-overs deep, paid for by cyd).
var hermesRun = sb.RunContext{RunID: "run-h", ParentRunID: "run-p", RootRunID: "root-h", AgentID: "hermes", CallPath: "atlas",
	TaskHops: 2, PaidBy: "cyd"}

func TestIssueVerifyRoundTrip(t *testing.T) {
	clock := &fakeClock{now: t0}
	k := keys(t, secret, clock)
	tok, err := k.Issue(hermesRun, t0.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	got, err := k.Verify(tok)
	if err != nil || got != hermesRun {
		t.Fatalf("Verify = %+v, %v; want %+v", got, err, hermesRun)
	}
	clock.now = t0.Add(time.Minute - time.Millisecond)
	if _, err := k.Verify(tok); err != nil {
		t.Errorf("a millisecond before the deadline: %v, want accepted", err)
	}
}

func TestVerifyRefuses(t *testing.T) {
	clock := &fakeClock{now: t0}
	k := keys(t, secret, clock)
	tok, err := k.Issue(hermesRun, t0.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(tok, ".")
	// The payload of another run, with hermes's signature.
	other, _ := keys(t, secret, clock).Issue(sb.RunContext{RunID: "run-a", RootRunID: "root-h", AgentID: "atlas"}, t0.Add(time.Minute))
	swapped := parts[0] + "." + strings.Split(other, ".")[1] + "." + parts[2]
	foreign, _ := keys(t, "another-instance-signing-key", clock).Issue(hermesRun, t0.Add(time.Minute))
	flipped := []byte(tok)
	flipped[len("v1.")+3] ^= 1
	unsignedPayload := "v1." + base64.RawURLEncoding.EncodeToString([]byte(`{"run":{"runId":"x","rootRunId":"x","agentId":"hermes"},"exp":9999999999999}`)) + "."

	tests := []struct {
		name  string
		token string
		now   time.Time
		want  string
	}{
		{"empty", "", t0, "malformed"},
		{"not a token", "hello", t0, "malformed"},
		{"another version", "v2" + tok[2:], t0, "malformed"},
		{"payload of another run", swapped, t0, "signature does not match"},
		{"one bit changed", string(flipped), t0, "signature does not match"},
		{"no signature", unsignedPayload, t0, "signature does not match"},
		{"signature cut short", tok[:len(tok)-2], t0, "signature does not match"},
		{"another instance's key", foreign, t0, "signature does not match"},
		{"at the deadline", tok, t0.Add(time.Minute), "expired at 2026-12-02T10:16:00Z"},
		{"past the deadline", tok, t0.Add(time.Hour), "expired"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock.now = tt.now
			run, err := k.Verify(tt.token)
			if sb.ErrorCode(err) != sb.EFORBIDDEN || !strings.Contains(sb.ErrorMessage(err), tt.want) {
				t.Fatalf("Verify = %+v, %v; want %s saying %q", run, err, sb.EFORBIDDEN, tt.want)
			}
			if run != (sb.RunContext{}) {
				t.Errorf("a refused token answered run %+v", run)
			}
		})
	}
}

// A run's token never outlives MaxTTL, whatever deadline it is given.
func TestIssueCapsTheExpiry(t *testing.T) {
	clock := &fakeClock{now: t0}
	k := keys(t, secret, clock)
	tok, err := k.Issue(hermesRun, t0.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	clock.now = t0.Add(runtoken.MaxTTL)
	if _, err := k.Verify(tok); sb.ErrorCode(err) != sb.EFORBIDDEN {
		t.Errorf("after MaxTTL: %v, want expired", err)
	}
}

func TestIssueNeedsARun(t *testing.T) {
	k := keys(t, secret, &fakeClock{now: t0})
	for _, run := range []sb.RunContext{{}, {RunID: "r", RootRunID: "r"}, {RunID: "r", AgentID: "a"}} {
		if _, err := k.Issue(run, t0.Add(time.Minute)); sb.ErrorCode(err) != sb.EINVALID {
			t.Errorf("Issue(%+v) = %v, want EINVALID", run, err)
		}
	}
}

func TestNewRefusesAShortSecret(t *testing.T) {
	if _, err := runtoken.New("short"); sb.ErrorCode(err) != sb.EINVALID {
		t.Errorf("New(short) = %v, want EINVALID", err)
	}
}

// The key is the secret's HKDF, not the secret: a token signed with the
// secret itself (an approval link's key) does not verify, and the same
// secret derives the same key in every function.
func TestKeyIsDerived(t *testing.T) {
	clock := &fakeClock{now: t0}
	a, b := keys(t, secret, clock), keys(t, secret, clock)
	tok, _ := a.Issue(hermesRun, t0.Add(time.Minute))
	if _, err := b.Verify(tok); err != nil {
		t.Fatalf("the same secret derives another key: %v", err)
	}
	body := tok[:strings.LastIndexByte(tok, '.')]
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(body))
	withSecret := body + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
	if _, err := a.Verify(withSecret); sb.ErrorCode(err) != sb.EFORBIDDEN {
		t.Errorf("a token signed with the secret itself: %v, want refused", err)
	}
}

func TestLive(t *testing.T) {
	clock := &fakeClock{now: t0}
	k := keys(t, secret, clock)
	store := memstore.New()
	live := runtoken.Live{Keys: k, Receipts: store}
	tok, _ := k.Issue(hermesRun, t0.Add(time.Minute))
	ctx := context.Background()
	if run, err := live.Verify(ctx, tok); err != nil || run != hermesRun {
		t.Fatalf("live run: %+v, %v; want %+v", run, err, hermesRun)
	}
	// Another run of the chain has ended: still live.
	if err := store.Put(ctx, sb.Receipt{Run: sb.RunContext{RunID: "run-p", RootRunID: "root-h", AgentID: "atlas"}, AgentID: "atlas", StartedAt: t0}); err != nil {
		t.Fatal(err)
	}
	if _, err := live.Verify(ctx, tok); err != nil {
		t.Fatalf("after the parent's receipt: %v, want accepted", err)
	}
	if err := store.Put(ctx, sb.Receipt{Run: hermesRun, AgentID: "hermes", StartedAt: t0}); err != nil {
		t.Fatal(err)
	}
	if _, err := live.Verify(ctx, tok); sb.ErrorCode(err) != sb.EFORBIDDEN || !strings.Contains(sb.ErrorMessage(err), "run run-h has ended") {
		t.Errorf("after the run's receipt: %v, want EFORBIDDEN saying the run has ended", err)
	}
	if _, err := (runtoken.Live{}).Verify(ctx, tok); sb.ErrorCode(err) != sb.EFORBIDDEN || !strings.Contains(sb.ErrorMessage(err), "not set up") {
		t.Errorf("without keys: %v, want EFORBIDDEN saying run tokens are not set up", err)
	}
	down := runtoken.Live{Keys: k, Receipts: downChains{}}
	if _, err := down.Verify(ctx, tok); sb.ErrorCode(err) != sb.EUNAVAILABLE {
		t.Errorf("receipts unreadable: %v, want EUNAVAILABLE", err)
	}
}

type downChains struct{}

func (downChains) ChainCost(context.Context, string) (sb.ChainCost, error) {
	return sb.ChainCost{}, sb.E("receipts.chain", sb.EUNAVAILABLE, "throttled")
}
