package scrub

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/platform/fuzztest"
	"unicode/utf8"
)

// fuzzFragments are pieces of secret shapes the fuzzer splices into its text,
// so that it explores how rules meet each other and random context instead
// of having to guess "-----BEGIN " byte by byte.
var fuzzFragments = []string{
	"token=", "password: ", `"password":"`, `"apiKey": `, `\"secret\":\"`, "appPassword=", "&pass=",
	"Authorization: Bearer ", "Authorization: Basic ", "Basic dXNlcjpwYXNz", "bearer ",
	"-----BEGIN RSA PRIVATE KEY-----\n", "\n-----END RSA PRIVATE KEY-----",
	"https://bob:", "@host/", "://", "AKIA", "ASIA", "IOSFODNN7EXAMPLE",
	"sk-", "sk_live_", "ghp_", "github_pat_", "xoxb-", "AIza", "eyJ", ".eyJ",
	"110201543:", "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw", "--password ", "X-Auth-Token: ",
	"***", "*", "\"", "'", "\\", ":", "=", " ", "\n", "{", "}", "[", "]", ",", "é",
}

func FuzzScrub(f *testing.F) {
	seeds := []struct {
		text, s1, s2 string
		plan         []byte
	}{
		{"pw hunter2hunter2", "hunter2hunter2", "", nil},
		{`{"password":"abc","note":"s3cr3t!"}`, "s3cr3t!", "abc", nil},
		{"xabcdefgh", "x***", "abcdefgh", nil},
		{"abcdefghi", "abcdef", "defghi", nil},
		{"abc", "tokentoken", "", []byte{0, 0, 22, 255}},
		{"abc.def-123 and dXNlcjpwYXNz", "abc.def-123", "dXNl", []byte{7, 0, 8, 128}},
		{"MIIE", "MIIE", "", []byte{11, 0, 12, 255}},
		{"pw@db/x", "bob:", "pw@d", []byte{13, 0}},
		{`{"a":[1,{"apiKey":12345}],"b":"{\"secret\":[\"x\"]}"}`, "12345", "1234", nil},
		{"a b\nc d", "aaaa", "****", []byte{1, 0, 2, 128}},
		{`abc\"`, `\"ab`, "", []byte{4, 0}},
		{"é€😀", "\xa9€", "\x80\xf0", nil},
	}
	for _, s := range seeds {
		f.Add(s.text, s.s1, s.s2, s.plan)
	}
	f.Fuzz(func(t *testing.T, text, s1, s2 string, plan []byte) {
		text = fuzztest.Splice(text, plan, fuzzFragments)
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
