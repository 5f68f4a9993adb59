package scrub

import (
	"encoding/json"
	"testing"
)

func TestJSON(t *testing.T) {
	s := New([]string{"hunter2hunter2"})
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"secret keys of every type",
			`{"token": 12345, "password":"p", "apiKey":["a",1,true,null], "botToken":{"v":"x","n":2.5e3}, "hasPassword": false, "secret": ""}`,
			`{"token": "***", "password":"***", "apiKey":["***","***",true,null], "botToken":{"v":"***","n":"***"}, "hasPassword": false, "secret": ""}`},
		{"key names case-insensitive",
			`{"AUTH_TOKEN":"a","App-Password":"b","WebhookSecret":"c","signing_key":"d"}`,
			`{"AUTH_TOKEN":"***","App-Password":"***","WebhookSecret":"***","signing_key":"***"}`},
		{"non-secret keys keep values", `{"tokenizer":"bpe","max_tokens":100,"user":"bob"}`, `{"tokenizer":"bpe","max_tokens":100,"user":"bob"}`},
		{"configured secret in value", `{"note":"pw is hunter2hunter2!"}`, `{"note":"pw is ***!"}`},
		{"configured secret in key", `{"hunter2hunter2":1}`, `{"***":1}`},
		{"configured secret escaped", `{"note":"\u0068unter2hunter2"}`, `{"note":"***"}`},
		{"pattern in value", `{"url":"postgres://bob:pw@db/x","h":"Bearer abcdefgh123"}`, `{"url":"postgres://bob:***@db/x","h":"Bearer ***"}`},
		{"embedded JSON string", `{"args":"{\"apiKey\": 7, \"room\": \"general\"}"}`, `{"args":"{\"apiKey\": \"***\", \"room\": \"general\"}"}`},
		{"whitespace kept", "{\n  \"password\" : \"x\",\n  \"a\" : [ 1 , 2 ]\n}\n", "{\n  \"password\" : \"***\",\n  \"a\" : [ 1 , 2 ]\n}\n"},
		{"escapes kept when clean", `{"a":"line\nbreak \u00e9 \/"}`, `{"a":"line\nbreak \u00e9 \/"}`},
		{"top-level string", `"token=abc"`, `"token=***"`},
		{"top-level number", `42`, `42`},
		{"empty containers", `{"token":{},"secret":[]}`, `{"token":{},"secret":[]}`},
		{"invalid falls back to text", `{"password":"abc", oops`, `{"password":"***", oops`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(s.JSON([]byte(tt.in)))
			if got != tt.want {
				t.Errorf("JSON(%s)\n got %s\nwant %s", tt.in, got, tt.want)
			}
			if json.Valid([]byte(tt.in)) && !json.Valid([]byte(got)) {
				t.Errorf("JSON made valid input invalid: %s", got)
			}
			if again := string(s.JSON([]byte(got))); again != got {
				t.Errorf("not idempotent: %s -> %s", got, again)
			}
		})
	}
}

func TestJSONReturnsInputWhenClean(t *testing.T) {
	in := []byte(`{"a":1}`)
	if got := New(nil).JSON(in); &got[0] != &in[0] {
		t.Errorf("JSON copied input that needed no masking")
	}
}
