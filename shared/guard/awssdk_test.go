package guard_test

import (
	"strings"
	"testing"
)

// awsSDKInPlatform lists the shared/platform packages that may import the
// AWS SDK (github.com/aws/aws-sdk-go-v2/..., github.com/aws/smithy-go/...)
// from non-test files, each with its reason. It is empty: every SDK client
// lives in an adapter (awsconfig loads the config, secrets talks to Secrets
// Manager), and platform/lambdamain uses aws-lambda-go, the Lambda runtime
// library, which is not the SDK.
var awsSDKInPlatform = map[string]string{}

// isAWSSDK reports whether ip is a package of the AWS SDK for Go.
func isAWSSDK(ip string) bool {
	for _, root := range []string{"github.com/aws/aws-sdk-go-v2", "github.com/aws/smithy-go"} {
		if ip == root || strings.HasPrefix(ip, root+"/") {
			return true
		}
	}
	return false
}

// TestPlatformImportsNoAWSSDK: the platform helpers every layer uses, the
// use cases and the agent tools speak no AWS SDK; an SDK client belongs in
// an adapter under shared/adapters, behind a small interface the caller
// defines (as platform/config's SecretResolver or provision's SecretStore,
// which the Secrets Manager adapter implements).
func TestPlatformImportsNoAWSSDK(t *testing.T) {
	r := loadRepo(t)
	n := 0
	for _, p := range sortedPkgs(r) {
		if !under(p.dir, "shared/platform") && !under(p.dir, "shared/usecases") && !under(p.dir, "shared/tools") {
			continue
		}
		n++
		for _, imp := range sortedImports(p) {
			if !isAWSSDK(imp) {
				continue
			}
			if _, ok := awsSDKInPlatform[p.dir]; ok {
				continue
			}
			t.Errorf("%s/%s imports %s: platform, use cases and tools import no AWS SDK; move the client into an adapter under shared/adapters and call it through an interface this package defines",
				p.dir, p.imports[imp][0], imp)
		}
	}
	if n < 30 {
		t.Fatalf("found only %d packages under shared/platform, usecases and tools; is loadRepo broken?", n)
	}
	for dir := range awsSDKInPlatform {
		if _, ok := r.pkgs[r.module+"/"+dir]; !ok {
			t.Errorf("awsSDKInPlatform lists %s, which no longer exists; drop it", dir)
		}
	}
}

func TestIsAWSSDK(t *testing.T) {
	tests := []struct {
		ip   string
		want bool
	}{
		{"github.com/aws/aws-sdk-go-v2/service/secretsmanager", true},
		{"github.com/aws/aws-sdk-go-v2", true},
		{"github.com/aws/smithy-go", true},
		{"github.com/aws/aws-lambda-go/lambda", false},
		{"github.com/aws/aws-sdk-go-v2x", false},
	}
	for _, tt := range tests {
		if got := isAWSSDK(tt.ip); got != tt.want {
			t.Errorf("isAWSSDK(%q) = %v, want %v", tt.ip, got, tt.want)
		}
	}
}
