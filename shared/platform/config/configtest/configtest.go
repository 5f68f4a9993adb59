// Package configtest holds test support for the config's secret
// resolvers: one table of references and what each must resolve to, run
// the same way against any resolver (the config's own, the Secrets
// Manager adapter's).
package configtest

import (
	"context"
	"strings"
	"testing"
)

// Resolver is what a secret resolver does (config.SecretResolver).
type Resolver interface {
	Resolve(ctx context.Context, ref string) (string, error)
}

// ResolveCase is one reference, what it resolves to, or a part of the
// error it must give.
type ResolveCase struct{ Name, Ref, Want, WantErr string }

// ResolveCases resolves every case with r, each as a subtest.
func ResolveCases(t *testing.T, r Resolver, cases []ResolveCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			got, err := r.Resolve(context.Background(), tc.Ref)
			if tc.WantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.WantErr) {
					t.Fatalf("Resolve(%q) error = %v, want containing %q", tc.Ref, err, tc.WantErr)
				}
				return
			}
			if err != nil || got != tc.Want {
				t.Fatalf("Resolve(%q) = %q, %v; want %q", tc.Ref, got, err, tc.Want)
			}
		})
	}
}
