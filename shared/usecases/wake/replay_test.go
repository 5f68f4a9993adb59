package wake_test

import (
	"testing"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/wake"
)

// The replay key is the wake's first claim key, whoever owns the claim:
// the dead attempt and the one that took it over share it.
func TestJobReplayKey(t *testing.T) {
	key := wake.ClaimKey("hermes", "m1")
	tests := []struct {
		name string
		job  sb.WakeJob
		want string
	}{
		{name: "first attempt", job: sb.WakeJob{Claim: &sb.WakeJobClaim{Keys: []string{key, wake.ClaimKey("hermes", "m2")}, Owner: "a"}}, want: key},
		{name: "take-over by another owner", job: sb.WakeJob{Claim: &sb.WakeJobClaim{Keys: []string{key}, Owner: "b"}}, want: key},
		{name: "no claim (approval follow-up, Telegram)", job: sb.WakeJob{}, want: ""},
		{name: "claim not known yet", job: sb.WakeJob{Claim: &sb.WakeJobClaim{Owner: "a"}}, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.job.ReplayKey(); got != tt.want {
				t.Errorf("ReplayKey() = %q, want %q", got, tt.want)
			}
		})
	}
}
