package wake_test

import (
	"testing"

	"github.com/switchboard-dev/switchboard/shared/usecases/wake"
)

// The replay key is the wake's first claim key, whoever owns the claim:
// the dead attempt and the one that took it over share it.
func TestJobReplayKey(t *testing.T) {
	key := wake.ClaimKey("hermes", "m1")
	tests := []struct {
		name string
		job  wake.Job
		want string
	}{
		{name: "first attempt", job: wake.Job{Claim: &wake.JobClaim{Keys: []string{key, wake.ClaimKey("hermes", "m2")}, Owner: "a"}}, want: key},
		{name: "take-over by another owner", job: wake.Job{Claim: &wake.JobClaim{Keys: []string{key}, Owner: "b"}}, want: key},
		{name: "no claim (approval follow-up, Telegram)", job: wake.Job{}, want: ""},
		{name: "claim not known yet", job: wake.Job{Claim: &wake.JobClaim{Owner: "a"}}, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.job.ReplayKey(); got != tt.want {
				t.Errorf("ReplayKey() = %q, want %q", got, tt.want)
			}
		})
	}
}
