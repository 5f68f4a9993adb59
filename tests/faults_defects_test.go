package tests

// Reproductions of defects the fault suite found, kept as regression tests
// next to it; they use the helpers of faults_test.go.

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/telegram/tgfake"
)

// An approval request that meets one Telegram 429 is neither waited out
// nor sent another way: the human never sees it.
func TestFaultTelegram429ApprovalRequest(t *testing.T) {
	w := startNotifyWorld(t)
	cases := []struct {
		name, fault string
		inject      func()
		onTelegram  bool // else it must come over the router's next channel
	}{
		{"one 429", "Telegram 429 retry_after 1 on the approval request",
			func() { w.tg.FailNext("sendMessage", 429, 1) }, true},
		{"storm", "Telegram 429 retry_after 30 on the approval request",
			func() { w.tg.FailNext("sendMessage", 429, 30) }, false},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			file := fmt.Sprintf("personal:r%d.md", i)
			w.dev.invoke("hermes", "Workspace", "write", map[string]any{"path": file, "content": "x"})
			want := "Workspace.delete"         // the request names the action
			tgBefore, rcBefore := w.seen(want) // the cases share one world
			tc.inject()
			_, m := w.dev.invoke("hermes", "Workspace", "delete", map[string]any{"path": file})
			if m["status"] != "pending_approval" || m["human_notified"] != true {
				t.Errorf("delete = %v, want pending_approval with human_notified true", m)
			}
			onTG, onRC := w.seen(want)
			onTG, onRC = onTG-tgBefore, onRC-rcBefore
			if tc.onTelegram && (onTG != 1 || onRC != 0) || !tc.onTelegram && (onRC != 1 || onTG != 0) {
				t.Errorf("approval request arrived %d× on Telegram, %d× on Rocket.Chat", onTG, onRC)
			}
			for _, msg := range append(w.tg.Messages(tgChat), tgfakeFromRC(w)...) {
				if strings.Contains(msg.Text, want) && !linkRE.MatchString(msg.Text) {
					t.Errorf("the request that arrived has no approve/deny link: %q", msg.Text)
				}
			}
			lost, doubled := lostDoubled(onTG + onRC)
			reportFault(t, tc.fault, fmt.Sprintf("human_notified %v; request %d× on Telegram, %d× on Rocket.Chat", m["human_notified"], onTG, onRC), lost, doubled)
		})
	}
}

func tgfakeFromRC(w *notifyWorld) []tgfake.Message {
	var out []tgfake.Message
	for _, m := range w.rc.Messages(w.dm) {
		out = append(out, tgfake.Message{Text: m.Text})
	}
	return out
}

// The outcome edit of an approval message meets one 429: the message keeps
// its buttons and never shows the outcome.
func TestFaultTelegram429ApprovalOutcome(t *testing.T) {
	w := startNotifyWorld(t)
	_, links := stageDelete(t, w.tg, w.dev, "personal:o.md")
	w.tg.FailNext("editMessageText", 429, 1)
	postDecision(t, links["approve"], "approve", nil)
	w.tg.Until(soft{t}, 3*time.Second, "the outcome edit", func() bool { return len(w.tg.Edits()) > 0 })
	_, onRC := w.seen("Outcome")
	shown := len(w.tg.Edits()) + onRC
	lost, doubled := lostDoubled(shown)
	reportFault(t, "Telegram 429 retry_after 1 on the outcome edit of an approval",
		fmt.Sprintf("%d edits, %d outcome notices on Rocket.Chat", len(w.tg.Edits()), onRC), lost, doubled)
}

// The agent's reply to a Telegram message is 2 parts; part 2 meets one
// 429: it is never sent.
func TestFaultTelegram429ConversationReply(t *testing.T) {
	w := startNotifyWorld(t)
	w.tg.SetAutoPush(true)
	w.tg.PassNext("sendMessage")
	w.tg.FailNext("sendMessage", 429, 1)
	long := strings.Repeat("word ", 800) + "TAIL-OF-THE-QUESTION"
	w.tg.InjectMessage(tgChat, tgfake.User{ID: tgApprover, FirstName: "Richard"}, long)
	tails := func() int {
		n := 0
		for _, m := range w.tg.Messages(tgChat) {
			if m.From != nil && m.From.IsBot && strings.Contains(m.Text, "TAIL-OF-THE-QUESTION") {
				n++
			}
		}
		return n
	}
	w.tg.Until(soft{t}, 5*time.Second, "part 2 of the reply", func() bool { return tails() > 0 })
	lost, doubled := lostDoubled(tails())
	reportFault(t, "Telegram 429 retry_after 1 on part 2 of the agent's reply over Telegram",
		fmt.Sprintf("part 2 arrived %d×", tails()), lost, doubled)
}
