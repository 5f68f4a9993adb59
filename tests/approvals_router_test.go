package tests

import (
	"net/http"
	"testing"
	"time"
)

// An approval request that Telegram refuses (a long 429) reaches the human
// over Rocket.Chat as text, and its approve link, allowed past the
// scrubbing of outbound text, still decides: the action runs once.
func TestApprovalLinkOverRocketChatDecides(t *testing.T) {
	w := startNotifyWorld(t)
	const file = "personal:via-rc.md"
	w.dev.invoke("hermes", "Workspace", "write", map[string]any{"path": file, "content": "x"})
	w.tg.FailNext("sendMessage", 429, 30)
	_, m := w.dev.invoke("hermes", "Workspace", "delete", map[string]any{"path": file})
	if m["status"] != "pending_approval" || m["human_notified"] != true {
		t.Fatalf("delete = %v, want pending_approval with human_notified true", m)
	}
	links := map[string]string{}
	for _, msg := range w.rc.Messages(w.dm) {
		for _, l := range linkRE.FindAllStringSubmatch(msg.Text, -1) {
			links[l[2]] = l[1]
		}
	}
	if links["approve"] == "" || links["deny"] == "" {
		t.Fatalf("the Rocket.Chat DM has no approve and deny links: %+v", w.rc.Messages(w.dm))
	}
	if got := postDecision(t, links["approve"], "approve", nil); got != http.StatusOK {
		t.Fatalf("approve by the Rocket.Chat link = %d, want 200", got)
	}
	if !eventually(10*time.Second, func() bool { return !fileExists(t, w.dev, file) }) {
		t.Error("the file is still there after the approval")
	}
	if got := postDecision(t, links["approve"], "approve", nil); got != http.StatusConflict {
		t.Errorf("second approve = %d, want 409", got)
	}
}
