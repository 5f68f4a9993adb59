package awssigned

import (
	"net/http"
	"testing"
)

// The error answers of the JSON and restJson1 APIs name their code in a
// header or the body, with or without a namespace or a URI; the text is
// the SDK's, with the status's name when the answer named no code.
func TestReadJSONError(t *testing.T) {
	tests := []struct {
		name   string
		header http.Header
		body   string
		code   string
	}{
		{"__type with namespace", nil, `{"__type":"com.amazonaws.secretsmanager#ResourceNotFoundException","Message":"no such secret"}`, "ResourceNotFoundException"},
		{"header with uri", http.Header{"X-Amzn-Errortype": {"ThrottlingException:http://internal.amazon.com/"}}, `{"message":"slow down"}`, "ThrottlingException"},
		{"code field", nil, `{"code":"ValidationException","message":"bad"}`, "ValidationException"},
		{"no code (a proxy's 502)", nil, `<html>bad gateway</html>`, ""},
	}
	for _, tt := range tests {
		e := ReadJSONError(502, tt.header, []byte(tt.body))
		if e.Code != tt.code || e.Status != 502 {
			t.Errorf("%s: code %q status %d, want %q 502", tt.name, e.Code, e.Status, tt.code)
		}
	}
	if got := ReadJSONError(502, nil, nil).Error(); got != "https response error StatusCode: 502, RequestID: , api error Bad Gateway: " {
		t.Errorf("text without a code = %q", got)
	}
	if !Throttling("SlowDown") || !Throttling("ThrottlingException") || Throttling("ValidationException") {
		t.Error("Throttling: SlowDown and ThrottlingException are throttling, ValidationException is not")
	}
}

func TestEscape(t *testing.T) {
	if got := Escape("agents/hermes/a b+(1).md", "/"); got != "agents/hermes/a%20b%2B%281%29.md" {
		t.Errorf("key = %q", got)
	}
	if got := Escape("arn:aws:bedrock:eu-central-1::foundation-model/x", ""); got != "arn%3Aaws%3Abedrock%3Aeu-central-1%3A%3Afoundation-model%2Fx" {
		t.Errorf("label = %q", got)
	}
}
