package provision_test

import (
	"context"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/adapters/secrets/smstore"
	"github.com/switchboard-dev/switchboard/shared/usecases/provision"
)

// The Secrets Manager adapter keeps the token in a deployment.
var _ provision.SecretStore = (*smstore.Store)(nil)

func TestPrintOnce(t *testing.T) {
	tests := []struct {
		name  string
		store provision.PrintOnce
		user  string
		want  string
	}{
		{"derived", provision.PrintOnce{}, "agent-hermes", "env:AGENT_HERMES_RC_TOKEN"},
		{"dots and underscores", provision.PrintOnce{}, "bot.atlas_2", "env:BOT_ATLAS_2_RC_TOKEN"},
		{"leading digit", provision.PrintOnce{}, "42bot", "env:RC_42BOT_RC_TOKEN"},
		{"named", provision.PrintOnce{EnvVar: "HERMES_RC_TOKEN"}, "agent-hermes", "env:HERMES_RC_TOKEN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.store.Put(context.Background(), tt.user, "secret-token")
			if err != nil || got != tt.want {
				t.Errorf("Put = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
