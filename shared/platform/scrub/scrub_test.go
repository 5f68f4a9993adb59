package scrub

import (
	"strings"
	"testing"
)

// Test values are assembled at run time so that no complete token shape sits
// in the source tree for secret scanners to trip over.
var (
	awsKeyID     = "AKIA" + "IOSFODNN7EXAMPLE"
	awsTempKeyID = "ASIA" + "Y34FZKBOKMUTVV7A"
	awsSecret    = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
	telegramTok  = "110201543:" + "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
	openAIKey    = "sk-" + "proj-4f9Tq2ZxR7wLmN0pK3sV8yB1"
	githubTok    = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"
	slackTok     = "xoxb-" + "2048-4096-Zx8Kq3Lm9Np"
	jwtTok       = "eyJhbGciOiJIUzI1NiJ9" + ".eyJzdWIiOiIxMjM0In0.sflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	googleKey    = "AIza" + "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"
)

func TestStringPatterns(t *testing.T) {
	s := New(nil)
	tests := []struct {
		name string
		in   string
		want string
	}{
		// AWS
		{"aws key id", "key " + awsKeyID + " used", "key AKIA*** used"},
		{"aws temporary key id", awsTempKeyID, "ASIA***"},
		{"aws key id too short", "AKIA1234", "AKIA1234"},
		{"aws key id lower case", strings.ToLower(awsKeyID), strings.ToLower(awsKeyID)},
		{"aws key id inside word", "X" + awsKeyID + "X", "X" + awsKeyID + "X"},
		{"aws secret ini", "aws_secret_access_key = " + awsSecret, "aws_secret_access_key = ***"},
		{"aws secret env", "AWS_SECRET_ACCESS_KEY=" + awsSecret + " next", "AWS_SECRET_ACCESS_KEY=*** next"},
		{"aws secret json", `{"SecretAccessKey":"` + awsSecret + `","AccessKeyId":"` + awsKeyID + `"}`, `{"SecretAccessKey":"***","AccessKeyId":"AKIA***"}`},
		{"aws session token", "AWS_SESSION_TOKEN=IQoJb3JpZ2luX2VjEJr//////////", "AWS_SESSION_TOKEN=***"},
		{"unlabelled 40 chars stay", awsSecret, awsSecret},

		// Authorization
		{"bearer header", "Authorization: Bearer abc.def-123", "Authorization: Bearer ***"},
		{"bearer lower case", "authorization: bearer abcdef123", "authorization: bearer ***"},
		{"bearer json", `{"Authorization":"Bearer abcdef123456"}`, `{"Authorization":"Bearer ***"}`},
		{"bearer go header map", "map[Authorization:[Bearer abcdef123456]]", "map[Authorization:[Bearer ***]]"},
		{"bearer alone", "sent Bearer " + jwtTok, "sent Bearer ***"},
		{"bearer prose", "the bearer of bad news", "the bearer of bad news"},
		{"bearer prose long word", "bearer authentication", "bearer authentication"},
		{"basic header", "Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic ***"},
		{"basic alone", "curl -H 'Basic dXNlcjpwYXNz'", "curl -H 'Basic ***'"},
		{"basic prose", "a basic configuration", "a basic configuration"},
		{"basic not credentials", "Basic aGVsbG8gd29ybGQ=", "Basic aGVsbG8gd29ybGQ="},
		{"raw authorization", "Authorization: 8f3b2c1d", "Authorization: ***"},

		// PEM
		{"pem rsa", "key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nabc\n-----END RSA PRIVATE KEY-----\nafter",
			"key:\n-----BEGIN RSA PRIVATE KEY-----***-----END RSA PRIVATE KEY-----\nafter"},
		{"pem pkcs8", "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----", "-----BEGIN PRIVATE KEY-----***-----END PRIVATE KEY-----"},
		{"pem openssh escaped", `"-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\n-----END OPENSSH PRIVATE KEY-----"`, `"-----BEGIN OPENSSH PRIVATE KEY-----***-----END OPENSSH PRIVATE KEY-----"`},
		{"pem truncated", "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE", "-----BEGIN EC PRIVATE KEY-----***"},
		{"pem public key stays", "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----", "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----"},

		// URLs
		{"url password", "postgres://bob:s3cr3t@db:5432/app", "postgres://bob:***@db:5432/app"},
		{"url password with at", "https://bob:p@ss@host/x", "https://bob:***@host/x"},
		{"url password empty user", "redis://:hunter@cache:6379", "redis://:***@cache:6379"},
		{"url port stays", "https://example.com:8443/a@b", "https://example.com:8443/a@b"},
		{"url user only stays", "https://bob@example.com/", "https://bob@example.com/"},

		// key/value
		{"query token", "https://x/hook?token=abc123&room=general", "https://x/hook?token=***&room=general"},
		{"query password", "login?user=bob&password=pw", "login?user=bob&password=***"},
		{"query pass", "login?user=bob&pass=pw", "login?user=bob&pass=***"},
		{"query apiKey", "GET /v1?apiKey=zz99", "GET /v1?apiKey=***"},
		{"json password", `{"user":"bob","password":"p\"w"}`, `{"user":"bob","password":"***"}`},
		{"json spaced", `{"appPassword" : "xxxxx-xxxxx"}`, `{"appPassword" : "***"}`},
		{"json authToken", `"authToken":"9HqLlyZOugoStsXCUfD_0YdwnNnunAJF8V47U3QHXSq"`, `"authToken":"***"`},
		{"json botToken", `"botToken": "x1x2x3x4"`, `"botToken": "***"`},
		{"json signingKey", `"signingKey":"k"`, `"signingKey":"***"`},
		{"json webhookSecret", `"webhookSecret":"w"`, `"webhookSecret":"***"`},
		{"json secret", `"secret":"s"`, `"secret":"***"`},
		{"json null stays", `"token": null`, `"token": null`},
		{"json bool stays", `"hasPassword": true`, `"hasPassword": true`},
		{"json empty stays", `"password":""`, `"password":""`},
		{"json in json string", `"args":"{\"apiKey\":\"zz\"}"`, `"args":"{\"apiKey\":\"***\"}"`},
		{"json unterminated", `{"password":"abc`, `{"password":"***`},
		{"yaml", "appPassword: abc def\nuser: bob", "appPassword: ***\nuser: bob"},
		{"yaml quoted", "password: 'abc def'", "password: '***'"},
		{"yaml empty", "password:\nuser: bob", "password:\nuser: bob"},
		{"x-auth-token header", "X-Auth-Token: 9HqLlyZOugoStsXCUfD", "X-Auth-Token: ***"},
		{"x-auth-token header map", "map[X-Auth-Token:[9HqLlyZOugo]]", "map[X-Auth-Token:[***]]"},
		{"telegram secret header", "X-Telegram-Bot-Api-Secret-Token: abcd", "X-Telegram-Bot-Api-Secret-Token: ***"},
		{"client secret", "client_secret=abc", "client_secret=***"},
		{"private key field", `"private_key": "abc"`, `"private_key": "***"`},
		{"logfmt", `level=INFO token=abc user=bob`, `level=INFO token=*** user=bob`},
		{"tokenizer", "tokenizer=bpe tokenizer: cl100k", "tokenizer=bpe tokenizer: cl100k"},
		{"max_tokens", "max_tokens=100 input_tokens: 5 tokens=7", "max_tokens=100 input_tokens: 5 tokens=7"},
		{"secret name", "secretName=prod/rc secretArn=arn:aws", "secretName=prod/rc secretArn=arn:aws"},
		{"bypass", "bypass=1 compass: north", "bypass=1 compass: north"},
		{"prose", "the password is required", "the password is required"},
		{"path", "/api/v1/users.createToken", "/api/v1/users.createToken"},
		{"cli flag", "run --password hunter2 --verbose", "run --password *** --verbose"},
		{"cli flag next flag", "run --token --verbose", "run --token --verbose"},

		// vendor tokens
		{"telegram", "bot" + telegramTok + "/getMe", "bot110201543:***/getMe"},
		{"telegram bare", "token " + telegramTok, "token 110201543:***"},
		{"telegram short stays", "123456:abc", "123456:abc"},
		{"time stays", "12:30:45 2024-01-01T10:00:00Z", "12:30:45 2024-01-01T10:00:00Z"},
		{"openai", "key " + openAIKey, "key sk-***"},
		{"openai short stays", "sk-abc", "sk-abc"},
		{"task id stays", "task-0123456789abcdefghijk", "task-0123456789abcdefghijk"},
		{"stripe", "sk_live_" + "abcdEFGH1234ijkl", "sk_live_***"},
		{"github", githubTok + " leaked", "ghp_*** leaked"},
		{"github fine grained", "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnop", "github_pat_***"},
		{"slack", slackTok, "xoxb-***"},
		{"google", "key=" + googleKey, "key=***"},
		{"jwt", "id " + jwtTok, "id ***"},
		{"plain text stays", "Hello @bob, the report is in /Reports/2024.", "Hello @bob, the report is in /Reports/2024."},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := s.String(tt.in)
			if got != tt.want {
				t.Errorf("String(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			if again := s.String(got); again != got {
				t.Errorf("not idempotent: String(%q) = %q", got, again)
			}
		})
	}
}

func TestNewIgnoresShortSecrets(t *testing.T) {
	s := New([]string{"", "a", "abc", "héé", "abcd"})
	got := s.String("a abc héé abcd")
	if want := "a abc héé ***"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestSecrets(t *testing.T) {
	tests := []struct {
		name    string
		secrets []string
		in      string
		want    string
	}{
		{"plain", []string{"hunter2hunter2"}, "pw hunter2hunter2!", "pw ***!"},
		{"repeated", []string{"s3cr3t"}, "s3cr3ts3cr3t s3cr3t", "*** ***"},
		{"longest first", []string{"abcd", "abcdefgh"}, "xabcdefghx", "x***x"},
		{"overlapping secrets leave nothing", []string{"abcdef", "defghi"}, "abcdefghi", "***"},
		{"self-overlap", []string{"aaaa"}, "aaaaaaa", "***"},
		{"trimmed", []string{"tok-1234\n"}, "tok-1234 used", "*** used"},
		{"json escaped", []string{`pa"ss\wd`}, `{"p":"pa\"ss\\wd"}`, `{"p":"***"}`},
		{"url escaped", []string{"p@ss w/rd"}, "x?pw=p%40ss+w%2Frd&y=1", "x?pw=***&y=1"},
		{"mask rebuilds secret", []string{"x***", "abcdefgh"}, "xabcdefgh", "***"},
		{"unicode", []string{"pässwörd"}, "my pässwörd.", "my ***."},
		{"case sensitive", []string{"Secret99"}, "secret99", "secret99"},
		// A fixed-length pattern (a Google API key is AIza + 35) that ends
		// inside a configured secret must not eat its head and leave the
		// rest unrecognised.
		{"pattern ends inside a secret", []string{"QXZJKVWYQXZJKVWYQXZJKVWYQXZJ"},
			"AIzaabcdefghijklmnopqrstuvwxyz0123QXZJKVWYQXZJKVWYQXZJKVWYQXZJ!", "AIzaabcdefghijklmnopqrstuvwxyz0123***!"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(tt.secrets)
			got := s.String(tt.in)
			if got != tt.want {
				t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if again := s.String(got); again != got {
				t.Errorf("not idempotent: String(%q) = %q", got, again)
			}
		})
	}
}

func TestNilScrubberMasksPatterns(t *testing.T) {
	var s *Scrubber
	if got, want := s.String("token=abc"), "token=***"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := string(s.JSON([]byte(`{"apiKey":1}`))), `{"apiKey":"***"}`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestBytes(t *testing.T) {
	s := New([]string{"hunter2hunter2"})
	in := []byte("pwd=x hunter2hunter2")
	if got, want := string(s.Bytes(in)), "pwd=*** ***"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	clean := []byte("nothing here")
	if got := s.Bytes(clean); &got[0] != &clean[0] {
		t.Errorf("Bytes copied input that needed no masking")
	}
}

func TestIsSecretKey(t *testing.T) {
	tests := []struct {
		key  string
		want bool
	}{
		{"token", true}, {"authToken", true}, {"auth_token", true}, {"X-Auth-Token", true},
		{"password", true}, {"appPassword", true}, {"PASSWORD", true}, {"pass", true}, {"pwd", true},
		{"apiKey", true}, {"api_key", true}, {"X-Api-Key", true}, {"botToken", true},
		{"signingKey", true}, {"secret", true}, {"webhookSecret", true}, {"client_secret", true},
		{"aws_secret_access_key", true}, {"SecretAccessKey", true}, {"privateKey", true},
		{"Authorization", true}, {"Cookie", true}, {"set-cookie", true},
		{"tokenizer", false}, {"max_tokens", false}, {"tokens", false}, {"tokenCount", false},
		{"secretName", false}, {"secretArn", false}, {"username", false}, {"AccessKeyId", false},
		{"passwordPolicy", false}, {"bypass", false}, {"key", false}, {"", false},
	}
	for _, tt := range tests {
		if got := IsSecretKey(tt.key); got != tt.want {
			t.Errorf("IsSecretKey(%q) = %v, want %v", tt.key, got, tt.want)
		}
	}
}
