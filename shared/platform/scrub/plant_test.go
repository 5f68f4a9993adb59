package scrub

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

// configured are ten secrets of the kinds Switchboard holds: Rocket.Chat
// personal access tokens, Nextcloud app passwords, a Telegram bot token, the
// tool API bearer, the approval signing key, webhook tokens, model keys.
var configured = []string{
	"9HqLlyZOugoStsXCUfD_0YdwnNnunAJF8V47U3QHXSq",
	"Kx7Qp-2mVnR-8sLtY-4wZaB-6cDeF",
	"agent-pw-üñí-2024!",
	"tool-api-bearer-7f3e9a1c",
	"c2lnbmluZy1rZXktZm9yLWFwcHJvdmFscw==",
	"rc-webhook-token-42",
	"nc:admin/p@ss w0rd",
	"hunter2hunter2",
	"zq9$&<x>\"quoted\"",
	"1234567890",
}

// plantedPattern is a well-known secret shape and the part that must go.
type plantedPattern struct {
	text, secret string
}

func plantedPatterns() []plantedPattern {
	return []plantedPattern{
		{"key id " + awsKeyID, awsKeyID[4:]},
		{"temp " + awsTempKeyID, awsTempKeyID[4:]},
		{"aws_secret_access_key=" + awsSecret, awsSecret},
		{"Authorization: Bearer bearer-tok-0001xyz", "bearer-tok-0001xyz"},
		{"Authorization: Basic dXNlcjpwbGFudGVkUGFzcw==", "dXNlcjpwbGFudGVkUGFzcw=="},
		{"-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAplanted\n-----END RSA PRIVATE KEY-----", "MIIEpAIBAAKCAQEAplanted"},
		{"https://bob:urlpass99@nc.example/x", "urlpass99"},
		{"token=qs-token-555&x=1", "qs-token-555"},
		{"apiKey: yaml-api-key-7", "yaml-api-key-7"},
		{"appPassword=app-pass-8", "app-pass-8"},
		{"X-Auth-Token: rc-pat-abcdef", "rc-pat-abcdef"},
		{"bot" + telegramTok + "/getMe", telegramTok[10:]},
		{"model " + openAIKey, openAIKey[3:]},
		{"gh " + githubTok, githubTok[4:]},
		{"slack " + slackTok, slackTok[5:]},
	}
}

func TestPlantedSecretsNeverSurvive(t *testing.T) {
	s := New(configured)
	pats := plantedPatterns()

	var text strings.Builder
	doc := map[string]any{}
	var attrs []any
	for i, sec := range configured {
		text.WriteString("value " + sec + " end\n")
		doc["field"+string(rune('a'+i))] = "in " + sec + " here"
		attrs = append(attrs, "attr"+string(rune('a'+i)), sec)
	}
	for i, p := range pats {
		text.WriteString(p.text + "\n")
		doc["pattern"+string(rune('a'+i))] = p.text
		attrs = append(attrs, "p"+string(rune('a'+i)), p.text)
	}
	doc["token"] = "plain-token-value"
	doc["nested"] = map[string]any{"botToken": 12345, "list": []any{configured[0], configured[9]}}
	rawDoc, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}

	var logBuf bytes.Buffer
	slog.New(NewHandler(slog.NewJSONHandler(&logBuf, nil), s)).Info(text.String(), attrs...)

	outputs := map[string]string{
		"text": s.String(text.String()),
		"json": string(s.JSON(rawDoc)),
		"log":  logBuf.String(),
	}
	leaks := append([]string{}, configured...)
	for _, p := range pats {
		leaks = append(leaks, p.secret)
	}
	leaks = append(leaks, "plain-token-value", "12345")
	for name, out := range outputs {
		for _, leak := range leaks {
			for _, v := range []string{leak, jsonEscaped(leak)} {
				if strings.Contains(out, v) {
					t.Errorf("%s output leaks %q:\n%s", name, v, out)
				}
			}
		}
	}
	if !json.Valid([]byte(outputs["json"])) {
		t.Errorf("scrubbed JSON is invalid: %s", outputs["json"])
	}
	for name, in := range map[string]string{"text": outputs["text"], "log": outputs["log"]} {
		if again := s.String(in); again != in {
			t.Errorf("%s: scrubbing is not idempotent", name)
		}
	}
	if again := string(s.JSON([]byte(outputs["json"]))); again != outputs["json"] {
		t.Errorf("JSON scrubbing is not idempotent:\n%s\n%s", outputs["json"], again)
	}
}

func jsonEscaped(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}
