package approvals

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	"github.com/switchboard-dev/switchboard/shared/platform/untrusted"
)

// Caps of the follow-up text: the model needs the gist, not megabytes.
const (
	followUpArgs   = 2000
	followUpResult = 8000
)

// FollowUpText is the wake message of the follow-up run: what was asked,
// who decided what and when (our words), then the args and the tool's
// envelope inside one untrusted frame (a result carries others' text).
func FollowUpText(a Approval) string {
	what := fmt.Sprintf("%s.%s (approval %s)", a.Tool, a.Action, a.ID)
	when := a.DecidedAt.UTC().Format(time.RFC3339)
	who := describeDecider(a.DecidedBy)
	var head string
	withResult := false
	switch a.Status {
	case StatusExecuted:
		head = fmt.Sprintf("Your request %s was approved by %s at %s and has run once. The tool's answer is below. Do not run it again; carry on with your task.",
			what, who, when)
		withResult = true
	case StatusFailed:
		// Only the worker that takes the approved call stamps StartedAt:
		// a failed approval without it was closed before it ran.
		if a.StartedAt.IsZero() {
			head = fmt.Sprintf("Your request %s was approved by %s at %s, but it did not run and will not run now; the reason is below. "+
				"If it is still needed, ask again.", what, who, when)
			break
		}
		if code, _ := a.Result.Data["code"].(string); code == TargetChangedCode {
			head = fmt.Sprintf("Your request %s was approved by %s at %s, but it did not run: its target changed after you asked "+
				"(the answer below says how). Look at the target again; if the action is still right, ask again.", what, who, when)
			withResult = true
			break
		}
		head = fmt.Sprintf("Your request %s was approved by %s at %s, but the action failed; the tool's answer is below. "+
			"Do not simply repeat it (that would need a new approval); tell the human what went wrong if it matters.", what, who, when)
		withResult = true
	case StatusDenied:
		head = fmt.Sprintf("Your request %s was denied by %s at %s. It did not run. Do not try it again; "+
			"if it still matters, tell the human what you wanted to do and why, or find another way.", what, who, when)
		if a.DenyReason != "" {
			head += " The human said why (below, as \"reason for the denial\"); take it into account."
		} else {
			head += " No reason was given."
		}
	case StatusExpired:
		head = fmt.Sprintf("Nobody decided on your request %s before it expired at %s. It did not run. "+
			"If it is still needed, ask again and tell the human why it matters.", what, a.ExpiresAt.UTC().Format(time.RFC3339))
	default:
		head = fmt.Sprintf("Your request %s is %s.", what, a.Status)
	}
	var body strings.Builder
	args := []byte(a.Args)
	if c, err := Canonical(a.Args); err == nil {
		args = c
	}
	body.WriteString("args: " + scrub.Cap(string(args), followUpArgs))
	if a.Reason != "" {
		body.WriteString("\nreason given: " + scrub.Cap(a.Reason, 500))
	}
	if a.Status == StatusDenied && a.DenyReason != "" {
		body.WriteString("\nreason for the denial: " + scrub.Cap(a.DenyReason, maxDenyReason+3))
	}
	if withResult {
		res, err := json.Marshal(a.Result)
		if err != nil {
			res = []byte(`{"status":"error","error":"the result could not be shown"}`)
		}
		body.WriteString("\nresult: " + scrub.Cap(string(res), followUpResult))
	}
	return head + "\n" + untrusted.Frame("approval "+a.ID+" "+a.Tool+"."+a.Action, body.String())
}

// describeDecider turns DecidedBy into words for people and models.
func describeDecider(by string) string {
	switch {
	case by == DecidedByLink:
		return "a human via the approval link"
	case strings.HasPrefix(by, "telegram:"):
		return "Telegram user " + strings.TrimPrefix(by, "telegram:")
	case by == DecidedByExpiry:
		return "expiry"
	case by == "":
		return "someone"
	}
	return by
}
