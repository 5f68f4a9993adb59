package tests

import (
	"testing"
)

// Rocket.Chat answers 503 when the woken agent posts its reply: the reply
// is tried again and arrives once; nothing is lost.
func TestFaultRocketChatReplyPost503(t *testing.T) {
	w := startRCWorld(t)
	w.tick(t)
	w.mention(t, w.room, "reply while Rocket.Chat fails")
	w.rc.FailNext("chat.postMessage", 503, "<html>503 Service Temporarily Unavailable</html>")
	w.tick(t)
	w.dev.idle() // the wake and its retried reply are over
	w.tick(t)
	lost, doubled := w.settle(t, map[string]string{"reply while Rocket.Chat fails": w.room})
	reportFault(t, "Rocket.Chat 503 on chat.postMessage of the automatic reply after a poll wake",
		"the reply is tried again after a second and arrives once", lost, doubled)
}
