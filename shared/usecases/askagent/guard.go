package askagent

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/platform/taskerr"
)

// Asker is what the guard knows of an agent: whether it exists, whether
// ask_agent is enabled for it, and whom it may ask (empty = every other
// agent).
type Asker struct {
	Exists  bool
	Enabled bool
	Allowed []string
}

// Guard refuses a question the rules forbid, before anything is recorded
// or run. Its refusals are *taskerr.DeniedError, which the machine catches
// by name; the Reason is said to the asking agent as it is.
type Guard struct {
	Agent func(id string) Asker
}

// Check answers nil when q may be asked, a *taskerr.DeniedError when not
// (also when q carries no call path that ends with the asker: the cycle
// check never takes a missing path for an empty one), and a
// *taskerr.PermanentError for a payload that names no asker, target or run.
func (g *Guard) Check(_ context.Context, q Question) error {
	deny := func(format string, a ...any) error { return &taskerr.DeniedError{Reason: fmt.Sprintf(format, a...)} }
	switch {
	case q.From == "" || q.To == "" || q.RunID == "":
		return &taskerr.PermanentError{Message: "ask.guard: the question names no asker, target or run"}
	case !stampedPath(q.CallPath, q.From):
		return deny("this question carries no call path from %s's run, so whether it goes round in a circle cannot be checked; it was not asked", q.From)
	case q.To == q.From:
		return deny("you cannot ask yourself; answer from what you know or ask the human")
	case slices.Contains(q.CallPath, q.To):
		return deny("%s is already in this chain of questions (%s), so asking it would go round in a circle; answer with what you know",
			q.To, strings.Join(q.CallPath, " → "))
	case len(q.CallPath) > 1:
		return deny("you are answering a question from %s and cannot ask others in turn; answer with what you know",
			q.CallPath[len(q.CallPath)-2])
	}
	from, to := g.Agent(q.From), g.Agent(q.To)
	switch {
	case !from.Enabled:
		return deny("ask_agent is not enabled for you; the operator can add an ask_agent block to your tools")
	case !to.Exists:
		return deny("there is no agent %q; check the id", q.To)
	case len(from.Allowed) > 0 && !slices.Contains(from.Allowed, q.To):
		return deny("you may not ask %s; you may ask %s", q.To, strings.Join(from.Allowed, ", "))
	}
	return nil
}
