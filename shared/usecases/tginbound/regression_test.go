package tginbound_test

// Tests that expose defects in tginbound.go. They fail on the current code;
// copy this file next to helpers_test.go to run them:
//   cp /tmp/tgbugs/bugs_test.go /work/main/shared/usecases/tginbound/ && go test -race -run Bug ./shared/usecases/tginbound

import (
	"context"
	"net/http"
	"strings"
	"testing"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// Bug 2: a 409 because another poller runs is reported as "a webhook is
// set" with no error.
func TestRegressionOtherPollerConflictReportedAsWebhook(t *testing.T) {
	w := newWorld(t)
	w.tg.FailNextWith("getUpdates", http.StatusConflict,
		"Conflict: terminated by other getUpdates request; make sure that only one bot instance is running")
	out, err := w.poller.Tick(context.Background())
	if err == nil && strings.Contains(out, "webhook") {
		t.Errorf("Tick = %q, %v: two pollers are running, no webhook is set", out, err)
	}
	_ = sb.ECONFLICT
}

// Bug 3: "/atlas" followed by a newline (or tab) is not routed: only a
// space ends the prefix.
func TestRegressionPrefixFollowedByNewline(t *testing.T) {
	for _, text := range []string{"/atlas\nplease check the report", "@atlas\tplease check the report"} {
		w := newWorld(t)
		w.setWebhook(t, secret)
		w.tg.InjectMessage(ann, annUser, text)
		w.push(t)
		job := oneJob(t, w.disp)
		if job.AgentID != "atlas" {
			t.Errorf("%q went to %q, want atlas", text, job.AgentID)
		}
	}
}
