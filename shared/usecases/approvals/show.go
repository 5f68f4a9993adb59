package approvals

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
)

// Caps of what a person is shown of an approval.
const (
	showArgs   = 4000
	showResult = 2000
	showReason = 1000
)

// Shown is an approval as a person may see it on the confirmation page:
// plain text, scrubbed and capped, not yet escaped for any format.
type Shown struct {
	ID, Agent, What, Reason, Created, Expires, Args, Status, Decided, Result, RunID string
}

// Show turns a into what a person may see of it: the canonical args (what
// the tool will see), the reason and the result scrubbed and capped, the
// times in UTC with the time left until expiry.
func (s *Service) Show(a Approval) Shown {
	sc := s.scrub
	v := Shown{
		ID: a.ID, Agent: a.AgentID, What: a.Tool + "." + a.Action,
		Reason:  scrub.Cap(sc.String(a.Reason), showReason),
		Created: a.CreatedAt.UTC().Format("2006-01-02 15:04:05 MST"),
		Expires: a.ExpiresAt.UTC().Format("2006-01-02 15:04 MST") + until(s.now(), a.ExpiresAt),
		Args:    scrub.Cap(ShowArgs(sc, a.Args), showArgs),
		Status:  string(a.Status), RunID: a.Run.RunID,
	}
	if !a.DecidedAt.IsZero() {
		v.Decided = describeDecider(a.DecidedBy) + ", " + a.DecidedAt.UTC().Format("2006-01-02 15:04:05 MST")
	}
	if a.Result.Status != "" {
		if raw, err := json.Marshal(a.Result); err == nil {
			v.Result = scrub.Cap(string(sc.JSON(raw)), showResult)
		}
	}
	return v
}

// LogFailure logs a failed request for approval id (the detail stays in
// the log; the person is told to try again).
func (s *Service) LogFailure(ctx context.Context, method, id string, err error) {
	s.log.ErrorContext(ctx, "approval page failed", "method", method, "approvalId", logID(id), "err", err)
}

// ShowArgs is a tool call's arguments as a person is shown them, in
// every place that shows them: the confirmation page (Show), the request
// on Telegram and the other channels (Describe), and the console's
// approvals and chain pages. It is the canonical form (what a Go decoder,
// and so the tool, will see) with every secret masked by sc.JSON — the
// value of every secret-looking key (password, passwd, secret, token,
// apiKey, api_key, authToken, appPassword, …) at any depth, strings and
// numbers inside objects and arrays alike; JSON held in a string; bearer
// tokens and the other well-known patterns and every configured secret in
// any string — indented. Arguments that are not JSON (an audit entry cut
// at its cap) are scrubbed as text. A nil sc masks keys and patterns only.
// Cap the result, never the input: a cut could part a secret from the key
// that marks it.
func ShowArgs(sc Scrubber, args json.RawMessage) string {
	if sc == nil {
		sc = (*scrub.Scrubber)(nil)
	}
	c, err := Canonical(args)
	if err != nil {
		return sc.String(string(args))
	}
	c = sc.JSON(c)
	var b bytes.Buffer
	if json.Indent(&b, c, "", "  ") != nil {
		return string(c)
	}
	return b.String()
}

func until(now, t time.Time) string {
	d := t.Sub(now).Round(time.Minute)
	if d <= 0 {
		return " (passed)"
	}
	return fmt.Sprintf(" (in %dh %02dmin)", int(d.Hours()), int(d.Minutes())%60)
}
