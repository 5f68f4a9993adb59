// Package runtoken issues and checks run tokens: the one form in which a
// caller outside the engine may name an agent run (the "run" of POST
// /tools/invoke). A token is the run context the engine stamped — run,
// parent and root ids, the agent, the call path, the task depth and the
// payer — and an expiry (the run's deadline), signed with HMAC-SHA256.
// Run ids and call paths sent any other way are never believed.
//
// The key is derived from a secret the functions already hold
// (instance.approvals.signingKey) with HKDF-SHA256 and this package's own
// info string, so a run token's MAC and an approval link's MAC never
// share a key.
package runtoken

import (
	"bytes"
	"context"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// MinSecretLen is the shortest secret a key is derived from (the same
// bound as the approval signing key's).
const MinSecretLen = 16

// MaxTTL bounds a token's life whatever the run's deadline: a Lambda runs
// at most 15 minutes, and no run outlives its function.
const MaxTTL = 15 * time.Minute

// info separates this key from every other use of the same secret.
const info = "switchboard run token v1"

// version is the tokens' first part; a token of another version is not one
// of ours.
const version = "v1"

const op = "runtoken.verify"

// Keys issues and checks run tokens with one key. Now is time.Now when nil
// (tests set a fake clock).
type Keys struct {
	key []byte
	Now func() time.Time
}

// New derives the run-token key from secret (HKDF-SHA256). It returns
// EINVALID when the secret is shorter than MinSecretLen.
func New(secret string) (*Keys, error) {
	if len(secret) < MinSecretLen {
		return nil, sb.E("runtoken.new", sb.EINVALID, fmt.Sprintf("the secret run tokens are derived from must be at least %d bytes", MinSecretLen))
	}
	key, err := hkdf.Key(sha256.New, []byte(secret), nil, info, sha256.Size)
	if err != nil {
		return nil, fmt.Errorf("runtoken: derive key: %w", err)
	}
	return &Keys{key: key}, nil
}

// claims is the signed part of a token.
type claims struct {
	Run     runClaims `json:"run"`
	Expires int64     `json:"exp"` // Unix milliseconds
}

type runClaims struct {
	RunID       string `json:"runId"`
	ParentRunID string `json:"parentRunId,omitempty"`
	RootRunID   string `json:"rootRunId"`
	AgentID     string `json:"agentId"`
	CallPath    string `json:"callPath,omitempty"`
	// The run's task depth and payer travel with it: a call through the
	// tool API is bounded and charged like the run's own.
	TaskHops int    `json:"taskHops,omitempty"`
	PaidBy   string `json:"paidBy,omitempty"`
}

// Issue signs run until expires, which is cut to MaxTTL from now. It
// returns EINVALID for a run without run id, root or agent.
func (k *Keys) Issue(run sb.RunContext, expires time.Time) (string, error) {
	if run.RunID == "" || run.RootRunID == "" || run.AgentID == "" {
		return "", sb.E("runtoken.issue", sb.EINVALID, "a run token needs the run's id, root and agent")
	}
	if limit := k.now().Add(MaxTTL); expires.After(limit) {
		expires = limit
	}
	payload, err := json.Marshal(claims{Run: runClaims(run), Expires: expires.UnixMilli()})
	if err != nil {
		return "", fmt.Errorf("runtoken: encode: %w", err)
	}
	body := version + "." + base64.RawURLEncoding.EncodeToString(payload)
	return body + "." + base64.RawURLEncoding.EncodeToString(k.mac(body)), nil
}

// Verify answers the run token names. Every refusal is EFORBIDDEN with a
// message for the caller: a token that is malformed, was changed or was
// signed with another key, or has expired.
func (k *Keys) Verify(token string) (sb.RunContext, error) {
	const notOurs = "the run token is not one this instance's engine issued (malformed); leave \"run\" out to call as the operator"
	dot := strings.LastIndexByte(token, '.')
	if dot < 0 || !strings.HasPrefix(token, version+".") {
		return sb.RunContext{}, sb.E(op, sb.EFORBIDDEN, notOurs)
	}
	body, sig := token[:dot], token[dot+1:]
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, k.mac(body)) { // constant-time
		return sb.RunContext{}, sb.E(op, sb.EFORBIDDEN,
			"the run token's signature does not match: it was changed, or this instance's engine did not issue it")
	}
	payload, err := base64.RawURLEncoding.DecodeString(body[len(version)+1:])
	if err != nil {
		return sb.RunContext{}, sb.E(op, sb.EFORBIDDEN, notOurs)
	}
	var c claims
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil || c.Run.RunID == "" || c.Run.RootRunID == "" || c.Run.AgentID == "" || c.Expires == 0 {
		return sb.RunContext{}, sb.E(op, sb.EFORBIDDEN, notOurs)
	}
	if exp := time.UnixMilli(c.Expires); !k.now().Before(exp) {
		return sb.RunContext{}, sb.E(op, sb.EFORBIDDEN, fmt.Sprintf(
			"the run token expired at %s (its run's deadline): a run's token works only while the run lasts", exp.UTC().Format(time.RFC3339)))
	}
	return sb.RunContext(c.Run), nil
}

func (k *Keys) mac(body string) []byte {
	m := hmac.New(sha256.New, k.key)
	m.Write([]byte(body))
	return m.Sum(nil)
}

func (k *Keys) now() time.Time {
	if k.Now != nil {
		return k.Now()
	}
	return time.Now()
}

// Chains reads the receipts of a chain (sb.ReceiptStore's ChainCost).
type Chains interface {
	ChainCost(ctx context.Context, rootRunID string) (sb.ChainCost, error)
}

// Live checks tokens and, with Receipts set, that their run has not
// ended: the engine writes a run's receipt when it ends, so a receipt for
// the token's run id refuses the token before its expiry. (A run that
// crashed writes none; its token still ends at the deadline.)
type Live struct {
	Keys     *Keys
	Receipts Chains
}

// Verify answers the run token names. It returns EFORBIDDEN as
// Keys.Verify does, also when the instance has no run-token key or the run
// has ended, and EUNAVAILABLE when the receipts cannot be read.
func (l Live) Verify(ctx context.Context, token string) (sb.RunContext, error) {
	if l.Keys == nil {
		return sb.RunContext{}, sb.E(op, sb.EFORBIDDEN,
			"run tokens are not set up on this instance (they are derived from instance.approvals.signingKey); leave \"run\" out to call as the operator")
	}
	run, err := l.Keys.Verify(token)
	if err != nil || l.Receipts == nil {
		return run, err
	}
	chain, err := l.Receipts.ChainCost(ctx, run.RootRunID)
	if err != nil {
		return sb.RunContext{}, sb.Wrap(op, sb.EUNAVAILABLE, "whether the token's run is still going could not be checked; try again in a moment", err)
	}
	for _, r := range chain.Receipts {
		if r.Run.RunID == run.RunID {
			return sb.RunContext{}, sb.E(op, sb.EFORBIDDEN, fmt.Sprintf(
				"run %s has ended (its receipt is written), so its token no longer names a live run", run.RunID))
		}
	}
	return run, nil
}
