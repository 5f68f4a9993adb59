package approvals

import (
	"fmt"

	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
)

// Describe is the text of an approval request as the human sees it: who
// wants what, with which arguments (as ShowArgs shows them, cut at 600
// characters so that a long file content does not bury the question), why
// (scrubbed too), and until when. A nil sc masks secret-looking keys and
// well-known patterns only.
func Describe(ap Approval, agentName string, sc Scrubber) string {
	if sc == nil {
		sc = (*scrub.Scrubber)(nil)
	}
	args := ShowArgs(sc, ap.Args)
	if r := []rune(args); len(r) > 600 {
		args = string(r[:600]) + "…"
	}
	return fmt.Sprintf("%s wants to run %s.%s\nwith %s\nWhy: %s\nExpires: %s UTC",
		agentName, ap.Tool, ap.Action, args, sc.String(ap.Reason), ap.ExpiresAt.UTC().Format("2006-01-02 15:04"))
}

// OutcomeLine says in one line how an approval ended and who decided.
func OutcomeLine(ap Approval) string {
	who := ap.DecidedBy
	if who == "" {
		who = "nobody"
	}
	switch ap.Status {
	case StatusApproved, StatusExecuting:
		return "approved by " + who + "; running; the agent will report back"
	case StatusExecuted:
		return "approved by " + who + " and done"
	case StatusFailed:
		return "approved by " + who + ", but the action failed: " + ap.Result.Error
	case StatusDenied:
		return "denied by " + who
	case StatusExpired:
		return "expired without a decision"
	}
	return string(ap.Status)
}
