package config

import (
	"context"
	"slices"
	"strings"
	"testing"
)

func TestCollaboraHeadersAreSecretReferences(t *testing.T) {
	t.Setenv("SB_TEST_COLLABORA_KEY", "proxy-key-value")
	c, err := Parse(context.Background(), "t.yaml", []byte(withNC+`        collaboraUrl: https://office.example.org
        collaboraHeaders:
          X-Switchboard-Key: env:SB_TEST_COLLABORA_KEY
`), EnvResolver{})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Agents[0].Tools.Nextcloud.CollaboraHeaders["X-Switchboard-Key"]; got != "proxy-key-value" {
		t.Errorf("collaboraHeaders[X-Switchboard-Key] = %q, want the resolved value", got)
	}
	if !slices.Contains(c.Secrets(), "proxy-key-value") {
		t.Errorf("Secrets() = %q, want the header value (the scrubber masks it)", c.Secrets())
	}
}

func TestCollaboraHeadersProblems(t *testing.T) {
	_, err := parse(context.Background(), "t.yaml", []byte(withNC+`        collaboraHeaders:
          "bad header": env:X
          X-Switchboard-Key: inline-value
`), nil, ForAWS)
	if err == nil {
		t.Fatal("want problems")
	}
	for _, want := range []string{
		`agents[0].tools.Nextcloud.collaboraHeaders: are set but there is no collaboraUrl to send them to`,
		`agents[0].tools.Nextcloud.collaboraHeaders["bad header"]: "bad header" is not an HTTP header name`,
		`agents[0].tools.Nextcloud.collaboraHeaders["X-Switchboard-Key"]: is an inline secret value`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}
