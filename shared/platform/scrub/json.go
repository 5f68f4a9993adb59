package scrub

import (
	"encoding/json"
	"strings"
)

// secretKeySuffixes end the JSON and log attribute keys whose values are
// masked whole, compared after lower-casing and dropping '_', '-', '.' and
// spaces: token, authToken, botToken, password, appPassword, apiKey,
// signingKey, secret, webhookSecret, aws_secret_access_key, …
var secretKeySuffixes = []string{
	"token", "password", "passwd", "passphrase", "secret", "apikey",
	"signingkey", "privatekey", "secretkey", "secretaccesskey",
	"encryptionkey", "authorization", "cookie",
}

// IsSecretKey reports whether a key name looks like it holds a secret, case
// and separators ignored: "authToken", "app_password", "X-Api-Key" and
// "webhookSecret" do; "tokenizer", "max_tokens" and "secretName" do not.
func IsSecretKey(name string) bool {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if r == '_' || r == '-' || r == '.' || r == ' ' {
			continue
		}
		b.WriteRune(r)
	}
	k := b.String()
	if k == "pass" || k == "pwd" {
		return true
	}
	for _, suf := range secretKeySuffixes {
		if strings.HasSuffix(k, suf) {
			return true
		}
	}
	return false
}

// JSON scrubs a JSON document and keeps it valid. Every string (keys
// included) is scrubbed like String; a string that itself holds a JSON object
// or array is scrubbed as JSON. The value of every key for which IsSecretKey
// holds becomes "***" — strings and numbers, and inside objects and arrays
// every string and number; empty strings, booleans and null stay, so the log
// still says whether a secret was set. A number that contains a configured
// secret becomes "***" too. Key order and whitespace are kept.
// Input that is not valid JSON is scrubbed as text with Bytes. When nothing
// needs masking JSON returns raw itself.
func (s *Scrubber) JSON(raw []byte) []byte {
	if !json.Valid(raw) {
		return s.Bytes(raw)
	}
	w := jsonScrub{s: s, in: raw, out: make([]byte, 0, len(raw))}
	w.space()
	w.value(false)
	w.space()
	if string(w.out) == string(raw) {
		return raw
	}
	return w.out
}

// jsonScrub rewrites a document already checked by json.Valid, so it can
// read without error handling.
type jsonScrub struct {
	s   *Scrubber
	in  []byte
	pos int
	out []byte
}

func (w *jsonScrub) space() {
	start := w.pos
	for w.pos < len(w.in) {
		switch w.in[w.pos] {
		case ' ', '\t', '\n', '\r':
			w.pos++
			continue
		}
		break
	}
	w.out = append(w.out, w.in[start:w.pos]...)
}

func (w *jsonScrub) copyByte() byte {
	c := w.in[w.pos]
	w.out = append(w.out, c)
	w.pos++
	return c
}

func (w *jsonScrub) value(secret bool) {
	switch c := w.in[w.pos]; {
	case c == '{':
		w.copyByte()
		w.space()
		if w.in[w.pos] == '}' {
			w.copyByte()
			return
		}
		for {
			w.space()
			raw := w.stringToken()
			key := decodeString(raw)
			w.writeString(raw, key)
			w.space()
			w.copyByte() // ':'
			w.space()
			w.value(secret || IsSecretKey(key))
			w.space()
			if w.copyByte() == '}' {
				return
			}
		}
	case c == '[':
		w.copyByte()
		w.space()
		if w.in[w.pos] == ']' {
			w.copyByte()
			return
		}
		for {
			w.space()
			w.value(secret)
			w.space()
			if w.copyByte() == ']' {
				return
			}
		}
	case c == '"':
		raw := w.stringToken()
		str := decodeString(raw)
		if secret && str != "" {
			w.out = append(w.out, `"`+Mask+`"`...)
			return
		}
		w.writeString(raw, str)
	case c == 't' || c == 'f' || c == 'n':
		n := 4
		if c == 'f' {
			n = 5
		}
		w.out = append(w.out, w.in[w.pos:w.pos+n]...)
		w.pos += n
	default: // number
		start := w.pos
		for w.pos < len(w.in) && strings.IndexByte("+-.eE0123456789", w.in[w.pos]) >= 0 {
			w.pos++
		}
		// A number can hold a configured secret too (a PIN); it becomes a
		// masked string then, which keeps the document valid.
		if secret || w.s.containsSecret(string(w.in[start:w.pos])) {
			w.out = append(w.out, `"`+Mask+`"`...)
			return
		}
		w.out = append(w.out, w.in[start:w.pos]...)
	}
}

// stringToken returns the raw string token at pos, quotes included.
func (w *jsonScrub) stringToken() []byte {
	start := w.pos
	w.pos++
	for w.in[w.pos] != '"' {
		if w.in[w.pos] == '\\' {
			w.pos++
		}
		w.pos++
	}
	w.pos++
	return w.in[start:w.pos]
}

// writeString writes str scrubbed, or the original token when scrubbing
// changed nothing (so escapes and formatting survive).
func (w *jsonScrub) writeString(raw []byte, str string) {
	clean := w.s.jsonString(str)
	if clean == str {
		w.out = append(w.out, raw...)
		return
	}
	b, _ := json.Marshal(clean) // a string always marshals
	w.out = append(w.out, b...)
}

// jsonString scrubs one decoded JSON string; embedded JSON (tool arguments
// passed as a string, a response body in an error) is scrubbed as JSON.
func (s *Scrubber) jsonString(str string) string {
	t := strings.TrimSpace(str)
	if len(t) > 1 && (t[0] == '{' || t[0] == '[') && json.Valid([]byte(t)) {
		out := string(s.JSON([]byte(str)))
		out, _ = s.maskSecrets(out)
		return out
	}
	return s.String(str)
}

func decodeString(raw []byte) string {
	var s string
	_ = json.Unmarshal(raw, &s) // raw is a valid string token
	return s
}
