package approvals_test

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/approvals"
)

var (
	testKey  = []byte("0123456789abcdef-test-signing-key")
	hashA    = strings.Repeat("a", 64)
	hashB    = strings.Repeat("b", 64)
	tokenNow = time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
)

func mustSigner(t testing.TB, key []byte) *approvals.Signer {
	t.Helper()
	s, err := approvals.NewSigner(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestNewSignerRefusesShortKeys(t *testing.T) {
	for _, k := range [][]byte{nil, []byte(""), []byte("fifteen-bytes!!")} {
		if _, err := approvals.NewSigner(k); sb.ErrorCode(err) != sb.EINVALID {
			t.Errorf("NewSigner(%q): %v, want EINVALID", k, err)
		}
	}
}

func TestSignerKeyIsCopied(t *testing.T) {
	key := append([]byte(nil), testKey...)
	s := mustSigner(t, key)
	tok := s.Token("id1", "approve", hashA, tokenNow.Add(time.Hour))
	key[0] ^= 0xff
	if err := s.Verify(tok, "id1", "approve", hashA, tokenNow); err != nil {
		t.Fatalf("changing the caller's key slice changed the signer: %v", err)
	}
}

func TestVerify(t *testing.T) {
	s := mustSigner(t, testKey)
	exp := tokenNow.Add(time.Hour)
	good := s.Token("id1", "approve", hashA, exp)
	if len(good) != approvals.TokenLen || strings.ContainsAny(good, "=+/") {
		t.Fatalf("token %q: want %d base64url characters without padding", good, approvals.TokenLen)
	}
	raw, _ := base64.RawURLEncoding.DecodeString(good)
	flipped := func(i int) string {
		b := append([]byte(nil), raw...)
		b[i] ^= 1
		return base64.RawURLEncoding.EncodeToString(b)
	}
	other := mustSigner(t, []byte("another-key-of-enough-length"))
	tests := []struct {
		name                string
		token, id, decision string
		hash                string
		now                 time.Time
		want                error
	}{
		{"valid", good, "id1", "approve", hashA, tokenNow, nil},
		{"valid one second before expiry", good, "id1", "approve", hashA, exp.Add(-time.Second), nil},
		{"expired at the expiry second", good, "id1", "approve", hashA, exp, approvals.ErrTokenExpired},
		{"expired later", good, "id1", "approve", hashA, exp.Add(time.Hour), approvals.ErrTokenExpired},
		{"other id", good, "id2", "approve", hashA, tokenNow, approvals.ErrTokenInvalid},
		{"other decision", good, "id1", "deny", hashA, tokenNow, approvals.ErrTokenInvalid},
		{"other args", good, "id1", "approve", hashB, tokenNow, approvals.ErrTokenInvalid},
		{"other key", other.Token("id1", "approve", hashA, exp), "id1", "approve", hashA, tokenNow, approvals.ErrTokenInvalid},
		{"expiry moved", flipped(7), "id1", "approve", hashA, tokenNow, approvals.ErrTokenInvalid},
		{"mac changed", flipped(20), "id1", "approve", hashA, tokenNow, approvals.ErrTokenInvalid},
		{"forged and expired is invalid, not expired", flipped(20), "id1", "approve", hashA, exp.Add(time.Hour), approvals.ErrTokenInvalid},
		{"empty", "", "id1", "approve", hashA, tokenNow, approvals.ErrTokenInvalid},
		{"cut short", good[:len(good)-1], "id1", "approve", hashA, tokenNow, approvals.ErrTokenInvalid},
		{"one more character", good + "A", "id1", "approve", hashA, tokenNow, approvals.ErrTokenInvalid},
		{"padded", base64.URLEncoding.EncodeToString(raw), "id1", "approve", hashA, tokenNow, approvals.ErrTokenInvalid},
		{"standard alphabet", strings.NewReplacer("-", "+", "_", "/").Replace(good) + "", "id1", "approve", hashA, tokenNow, nil},
		{"not base64", strings.Repeat("!", approvals.TokenLen), "id1", "approve", hashA, tokenNow, approvals.ErrTokenInvalid},
		{"unknown decision", s.Token("id1", "maybe", hashA, exp), "id1", "maybe", hashA, tokenNow, approvals.ErrTokenInvalid},
		{"id with a separator", s.Token("id|1", "approve", hashA, exp), "id|1", "approve", hashA, tokenNow, approvals.ErrTokenInvalid},
		{"hash not hex", s.Token("id1", "approve", strings.Repeat("A", 64), exp), "id1", "approve", strings.Repeat("A", 64), tokenNow, approvals.ErrTokenInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.want
			if tt.name == "standard alphabet" {
				// Only a token without - and _ survives the swap; otherwise it is invalid.
				if strings.ContainsAny(good, "-_") {
					want = approvals.ErrTokenInvalid
				}
			}
			if got := s.Verify(tt.token, tt.id, tt.decision, tt.hash, tt.now); !errors.Is(got, want) || (want == nil) != (got == nil) {
				t.Fatalf("Verify: %v, want %v", got, want)
			}
		})
	}
}

// FuzzVerify: Verify never panics, and a token verifies only for its own
// id, decision, hash and time window — and every token that verifies is
// exactly the token the signer would have made.
func FuzzVerify(f *testing.F) {
	s := mustSigner(f, testKey)
	f.Add("id1", "approve", hashA, int64(1773480000), int64(1773476400), "id1", "approve", hashA, "", 0)
	f.Add("id1", "deny", hashA, int64(1773480000), int64(1773483600), "id1", "deny", hashA, "", 3)
	f.Add("Ab-_0123456789abcdefgh", "approve", hashB, int64(1), int64(0), "Ab-_0123456789abcdefgh", "deny", hashB, "x", 41)
	f.Add("", "", "", int64(-5), int64(-10), "", "", "", strings.Repeat("A", 54), 7)
	f.Fuzz(func(t *testing.T, id, decision, hash string, exp, now int64, vid, vdecision, vhash, arbitrary string, flip int) {
		tok := s.Token(id, decision, hash, time.Unix(exp, 0))
		if flip > 0 {
			b := []byte(tok)
			i := flip % len(b)
			b[i] ^= byte(flip>>8) | 1
			tok = string(b)
		}
		err := s.Verify(tok, vid, vdecision, vhash, time.Unix(now, 0))
		validInputs := sb.ValidApprovalID(id) && (decision == "approve" || decision == "deny") && isHex64(hash) && exp >= 0
		sameTarget := vid == id && vdecision == decision && vhash == hash
		if err == nil {
			if !sameTarget || !validInputs || now >= exp {
				t.Fatalf("token for (%q,%q,%q,exp %d) verified for (%q,%q,%q) at %d", id, decision, hash, exp, vid, vdecision, vhash, now)
			}
			if tok != s.Token(id, decision, hash, time.Unix(exp, 0)) {
				t.Fatalf("an altered token verified: %q", tok)
			}
		} else if flip == 0 && sameTarget && validInputs && now < exp {
			t.Fatalf("a genuine token was refused: %v", err)
		}
		// Arbitrary text: no panic; if it verifies it must be the signer's own token.
		if s.Verify(arbitrary, vid, vdecision, vhash, time.Unix(now, 0)) == nil {
			raw, derr := base64.RawURLEncoding.DecodeString(arbitrary)
			if derr != nil || len(raw) != 40 {
				t.Fatalf("malformed token %q verified", arbitrary)
			}
			var e int64
			for _, c := range raw[:8] {
				e = e<<8 | int64(c)
			}
			if s.Token(vid, vdecision, vhash, time.Unix(e, 0)) != arbitrary {
				t.Fatalf("token %q verified but is not the signer's", arbitrary)
			}
		}
	})
}

func isHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
