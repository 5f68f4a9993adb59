package handlers_test

import (
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/deploy"
	"github.com/switchboard-dev/switchboard/shared/httpapi"
)

// answerMargin is what a function needs after the budget to send the
// budget's answer before Lambda's own timeout cuts it off.
const answerMargin = 3 * time.Second

// TestEveryRouteHasABudgetBelowItsFunctionTimeout keeps the route budget
// table and the deploy catalogue in step: each function URL route has its
// own row, and the answer at the end of the budget still goes out before
// the function times out (a Lambda timeout answers 502 with no envelope,
// which Rocket.Chat does not retry).
func TestEveryRouteHasABudgetBelowItsFunctionTimeout(t *testing.T) {
	for _, f := range deploy.Functions {
		for _, r := range f.Routes {
			pattern := r.Method + " " + r.Path
			b, ok := httpapi.Budgets[pattern]
			if !ok {
				t.Errorf("%s (function %s) has no row in httpapi.Budgets", pattern, f.Name)
				continue
			}
			if limit := time.Duration(f.TimeoutSeconds)*time.Second - answerMargin; b.Limit > limit {
				t.Errorf("%s: budget %v, but function %s times out after %d s; keep the budget under %v",
					pattern, b.Limit, f.Name, f.TimeoutSeconds, limit)
			}
		}
	}
}
