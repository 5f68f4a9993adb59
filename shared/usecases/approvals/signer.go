package approvals

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"math"
	"strconv"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// MinKeyLen is the shortest signing key accepted (config validation asks
// for 16 characters too).
const MinKeyLen = 16

// tokenBytes is the decoded token: 8 bytes of expiry (Unix seconds, big
// endian) and the 32-byte HMAC-SHA256.
const tokenBytes = 8 + sha256.Size

// TokenLen is the length of every token: base64url without padding.
var TokenLen = base64.RawURLEncoding.EncodedLen(tokenBytes)

// Token errors. Verify returns ErrTokenExpired only for a token that is
// authentic in every other way; anything else wrong is ErrTokenInvalid.
var (
	ErrTokenInvalid = sb.E("approvals.verify", sb.EFORBIDDEN, "the approval link is not valid")
	ErrTokenExpired = sb.E("approvals.verify", sb.EFORBIDDEN, "the approval link has expired")
)

// Signer signs and checks approval tokens. A token binds one approval id,
// one decision, the hash of the exact action and an expiry:
//
//	base64url(exp || HMAC-SHA256(key, "v1|"+id+"|"+decision+"|"+argsHash+"|"+exp))
//
// exp being Unix seconds (8 bytes big endian in front, decimal inside the
// MAC). The token carries no id, so it is useless for any other approval.
type Signer struct{ key []byte }

// NewSigner copies key; EINVALID when it is shorter than MinKeyLen bytes.
func NewSigner(key []byte) (*Signer, error) {
	if len(key) < MinKeyLen {
		return nil, sb.E("approvals.signer", sb.EINVALID,
			"the approval signing key must be at least 16 bytes; set instance.approvals.signingKey")
	}
	return &Signer{key: append([]byte(nil), key...)}, nil
}

// Token signs (id, decision, argsHash) until exp (cut to whole seconds).
func (s *Signer) Token(id, decision, argsHash string, exp time.Time) string {
	var b [tokenBytes]byte
	e := exp.Unix()
	binary.BigEndian.PutUint64(b[:8], uint64(e))
	copy(b[8:], s.mac(id, decision, argsHash, e))
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// Verify checks token for (id, decision, argsHash) at now. It fails closed:
// a malformed token, id, decision or hash is ErrTokenInvalid, as is any MAC
// mismatch (compared with hmac.Equal, in constant time); a token whose MAC
// holds but whose expiry is not after now is ErrTokenExpired.
func (s *Signer) Verify(token, id, decision, argsHash string, now time.Time) error {
	if len(token) != TokenLen || !sb.ValidApprovalID(id) || !sb.ValidArgsHash(argsHash) {
		return ErrTokenInvalid
	}
	if _, ok := ParseDecision(decision); !ok {
		return ErrTokenInvalid
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(token)
	if err != nil || len(raw) != tokenBytes {
		return ErrTokenInvalid
	}
	u := binary.BigEndian.Uint64(raw[:8])
	if u > math.MaxInt64 {
		return ErrTokenInvalid
	}
	exp := int64(u)
	if !hmac.Equal(raw[8:], s.mac(id, decision, argsHash, exp)) {
		return ErrTokenInvalid
	}
	if now.Unix() >= exp {
		return ErrTokenExpired
	}
	return nil
}

func (s *Signer) mac(id, decision, argsHash string, exp int64) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte("v1|" + id + "|" + decision + "|" + argsHash + "|" + strconv.FormatInt(exp, 10)))
	return m.Sum(nil)
}
