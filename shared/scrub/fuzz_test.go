package scrub

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzScrub(f *testing.F) {
	seeds := []struct{ text, s1, s2 string }{
		{"pw hunter2hunter2", "hunter2hunter2", ""},
		{`{"password":"abc","note":"s3cr3t!"}`, "s3cr3t!", "abc"},
		{"xabcdefgh", "x***", "abcdefgh"},
		{"abcdefghi", "abcdef", "defghi"},
		{"token=" + "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A", "tokentoken", ""},
		{"Authorization: Bearer abc.def-123 and Basic dXNlcjpwYXNz", "abc.def-123", "dXNl"},
		{"-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----", "MIIE", ""},
		{"postgres://bob:pw@db/x?token=zz&password=\"a\\\"b\"", "bob:", "pw@d"},
		{`{"a":[1,{"apiKey":12345}],"b":"{\"secret\":[\"x\"]}"}`, "12345", "1234"},
		{"password: 'a b'\ntoken: \"c\nd\"", "aaaa", "****"},
		{"\"token\\\":\\\"abc\\\"", "\\\"ab", ""},
	}
	for _, s := range seeds {
		f.Add(s.text, s.s1, s.s2)
	}
	f.Fuzz(func(t *testing.T, text, s1, s2 string) {
		secrets := []string{s1, s2, "hunter2hunter2"}
		s := New(secrets)

		out := s.String(text)
		for _, sec := range mustMask(secrets) {
			if strings.Contains(out, sec) {
				t.Fatalf("String(%q) = %q still contains secret %q", text, out, sec)
			}
		}
		if again := s.String(out); again != out {
			t.Fatalf("String not idempotent:\n in %q\nout %q\nagain %q", text, out, again)
		}
		if utf8.ValidString(text) && !utf8.ValidString(out) {
			t.Fatalf("String(%q) = %q is not valid UTF-8", text, out)
		}

		if !json.Valid([]byte(text)) {
			return
		}
		jout := s.JSON([]byte(text))
		if !json.Valid(jout) {
			t.Fatalf("JSON(%s) = %s is invalid", text, jout)
		}
		if err := eachJSONString(jout, func(v string) error {
			for _, sec := range mustMask(secrets) {
				if strings.Contains(v, sec) {
					return errors.New("contains secret " + sec)
				}
			}
			return nil
		}); err != nil {
			t.Fatalf("JSON(%s) = %s: value %v", text, jout, err)
		}
		if again := s.JSON(jout); string(again) != string(jout) {
			t.Fatalf("JSON not idempotent:\n in %s\nout %s\nagain %s", text, jout, again)
		}
	})
}

// mustMask lists the configured values that may never appear in output.
func mustMask(secrets []string) []string {
	var out []string
	for _, sec := range secrets {
		for _, v := range []string{sec, strings.TrimSpace(sec)} {
			if utf8.RuneCountInString(v) >= MinSecretLen {
				out = append(out, v)
			}
		}
	}
	return out
}

// eachJSONString calls fn with every string, key and number in a document.
func eachJSONString(doc []byte, fn func(string) error) error {
	dec := json.NewDecoder(strings.NewReader(string(doc)))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		switch v := tok.(type) {
		case string:
			if err := fn(v); err != nil {
				return err
			}
		case json.Number:
			if err := fn(string(v)); err != nil {
				return err
			}
		}
	}
}
