package tests

// Reproductions of defects the fault suite found, kept as regression tests
// next to it; they use the helpers of faults_test.go.

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/telegram/tgfake"
)

// The agent's reply to a Telegram message is 2 parts; part 2 meets one
// 429: it is never sent.
func TestFaultTelegram429ConversationReply(t *testing.T) {
	w := startNotifyWorld(t)
	w.tg.SetAutoPush(true)
	w.tg.PassNext("sendMessage")
	w.tg.FailNext("sendMessage", 429, 1)
	long := strings.Repeat("word ", 800) + "TAIL-OF-THE-QUESTION"
	w.tg.InjectMessage(tgChat, tgfake.User{ID: tgApprover, FirstName: "Richard"}, long)
	deadline := time.Now().Add(5 * time.Second)
	tails := func() int {
		n := 0
		for _, m := range w.tg.Messages(tgChat) {
			if m.From != nil && m.From.IsBot && strings.Contains(m.Text, "TAIL-OF-THE-QUESTION") {
				n++
			}
		}
		return n
	}
	for tails() == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	lost, doubled := lostDoubled(tails())
	reportFault(t, "Telegram 429 retry_after 1 on part 2 of the agent's reply over Telegram",
		fmt.Sprintf("part 2 arrived %d×", tails()), lost, doubled)
}
