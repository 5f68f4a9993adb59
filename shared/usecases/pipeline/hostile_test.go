package pipeline_test

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// hostileDeliveries are deliveries that can only fail, each for a reason
// that needs no third party to see: Documents.deliver refuses every one
// before an execution starts. want is what the refusal must name.
var hostileDeliveries = []struct {
	name, agent, args, want string
}{
	// The workspace file.
	{"localPath climbs out with ..", agentID, `{"localPath":"personal:../ares/q3.csv"}`, "localPath"},
	{"localPath is absolute", agentID, `{"localPath":"/etc/passwd"}`, "localPath"},
	{"localPath has an unknown prefix", agentID, `{"localPath":"C:\\reports\\q3.csv"}`, "localPath"},
	{"localPath is not in the workspace", agentID, `{"localPath":"personal:nope.csv"}`, "personal:nope.csv"},
	{"localPath is blank", agentID, `{"localPath":"   "}`, "localPath"},
	{"localPath is oversized", agentID, `{"localPath":"personal:` + strings.Repeat("a", 700) + `.csv"}`, "localPath"},
	{"localPath is a number", agentID, `{"localPath":42}`, "localPath"},
	// The Nextcloud folder.
	{"folder climbs out with ..", agentID, `{"localPath":"personal:q3.csv","folder":"../../Other"}`, "folder"},
	{"folder hides .. inside", agentID, `{"localPath":"personal:q3.csv","folder":"reports/../../../etc"}`, "folder"},
	{"folder is percent-escaped", agentID, `{"localPath":"personal:q3.csv","folder":"%2e%2e/Other"}`, "percent-escape"},
	{"folder holds a newline", agentID, `{"localPath":"personal:q3.csv","folder":"reports\nx"}`, "control character"},
	{"folder is oversized", agentID, `{"localPath":"personal:q3.csv","folder":"` + strings.Repeat("f", 2000) + `"}`, "folder"},
	{"shared reports without a shared reports folder", plainID, `{"localPath":"personal:q3.csv","folder":"shared-reports:"}`, "shared reports folder"},
	// The room.
	{"room is unknown", agentID, `{"localPath":"personal:q3.csv","room":"#nowhere"}`, "allowedRooms"},
	{"room exists but is not allowed", agentID, `{"localPath":"personal:q3.csv","room":"vorstand"}`, "allowedRooms"},
	{"room is blank", agentID, `{"localPath":"personal:q3.csv","room":"   "}`, "room"},
	{"no room and no defaultRoom", plainID, `{"localPath":"personal:q3.csv"}`, "defaultRoom"},
	{"tmid is not an id", agentID, `{"localPath":"personal:q3.csv","tmid":"../x"}`, "tmid"},
	{"message is oversized", agentID, `{"localPath":"personal:q3.csv","message":"` + strings.Repeat("m", 5000) + `"}`, "message"},
	// The format.
	{"pdf without a collaboraUrl", plainID, `{"localPath":"personal:q3.csv","format":"pdf"}`, "collaboraUrl"},
	{"format is not offered", agentID, `{"localPath":"personal:q3.csv","format":"exe"}`, "format"},
	// The share.
	{"public link when not allowed", plainID, `{"localPath":"personal:q3.csv","share":{"publicLink":true}}`, "allowPublicShares"},
	{"share names both a user and a link", agentID, `{"localPath":"personal:q3.csv","share":{"with":"richard","publicLink":true}}`, "not both"},
	{"share names no one", agentID, `{"localPath":"personal:q3.csv","share":{}}`, "share"},
	{"share is a group without its name", agentID, `{"localPath":"personal:q3.csv","share":{"group":true}}`, "share"},
	{"share to a user with a password", agentID, `{"localPath":"personal:q3.csv","share":{"with":"richard","password":"hunter2hunter2"}}`, "password"},
	{"share is a string", agentID, `{"localPath":"personal:q3.csv","share":"richard"}`, "share"},
	{"share with a list of users", agentID, `{"localPath":"personal:q3.csv","share":{"with":["richard","anna"]}}`, "with"},
	{"share with an unknown key", agentID, `{"localPath":"personal:q3.csv","share":{"with":"richard","role":"owner"}}`, "role"},
	{"share expires in 0 days", agentID, `{"localPath":"personal:q3.csv","share":{"with":"richard","expireDays":0}}`, "expireDays"},
	{"an unknown argument", agentID, `{"localPath":"personal:q3.csv","to":"richard"}`, "to"},
}

// Every delivery above is refused before the machine starts: the error
// envelope at once, saying what is wrong; no StartExecution, no approval
// request, no "delivery failed" message for the human. A delivery that
// starts and fails afterwards (a Nextcloud user that does not exist, which
// only Nextcloud knows) shows that the counting and the human's channel
// work: one start, one message.
func TestHostileDeliveriesAreRefusedBeforeTheyStart(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.put("personal:q3.csv", "region,revenue\nnorth,10\n")
	w.putAs(plainID, "personal:q3.csv", "region,revenue\nnorth,10\n")
	for _, h := range hostileDeliveries {
		env := w.deliverAs(h.agent, h.args)
		t.Logf("%-48s → %s", h.name, env.Error)
		if env.Status != "error" || !strings.Contains(env.Error, h.want) {
			t.Errorf("%s: deliver answered %s %q, want an error naming %q", h.name, env.Status, env.Error, h.want)
		}
		if _, ok := env.Data["executionId"]; ok {
			t.Errorf("%s: answered an executionId %v", h.name, env.Data["executionId"])
		}
	}
	t.Logf("%d hostile deliveries sent", len(hostileDeliveries))
	if n := w.starts.count(); n != 0 {
		t.Errorf("%d of %d hostile deliveries started an execution, want none", n, len(hostileDeliveries))
	}
	if n := len(w.asked.requests); n != 0 {
		t.Errorf("%d approval requests reached the human, want none", n)
	}

	id := started(t, w.deliver(`{"localPath":"personal:q3.csv","share":{"with":"nobody-here"}}`))
	if d := w.wait(id); d.Status != types.ExecutionStatusFailed {
		t.Fatalf("the control delivery %s (%s), want FAILED at share", d.Status, aws.ToString(d.Cause))
	}
	if n := w.starts.count(); n != 1 {
		t.Errorf("%d executions started in all, want 1 (the control)", n)
	}
	if told := w.told.all(); len(told) != 1 || !strings.Contains(told[0], id) {
		t.Errorf("human told %q, want one message: the control's failure", told)
	}
	entries, _ := w.store.ByRoot(context.Background(), run.RootRunID)
	refused := 0
	for _, e := range entries {
		if e.Tool == "Documents" && e.Action == "deliver" && (e.Outcome == sb.OutcomeError || e.Outcome == sb.OutcomeRejected) {
			refused++
		}
	}
	if refused < len(hostileDeliveries) {
		t.Errorf("%d refused Documents.deliver calls in the audit, want %d", refused, len(hostileDeliveries))
	}
}
