package router_test

import (
	"testing"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"github.com/switchboard-dev/switchboard/shared/usecases/router"
)

// The other use cases' notice ports reach the human as notices of their
// own kind, and a channel's refusal comes back to the caller.
func TestNoticesCarryTheirKind(t *testing.T) {
	ctx := testCtx(t)
	tests := []struct {
		name   string
		notify func(router.Notices) error
		want   router.Notice
	}{
		{"an agent's text", func(n router.Notices) error { return n.NotifyHuman(ctx, "hermes", "could not post") },
			router.Notice{Kind: router.KindAgent, AgentID: "hermes", Text: "could not post"}},
		{"a daily budget", func(n router.Notices) error { return n.NotifyBudget(ctx, "hermes is over budget") },
			router.Notice{Kind: router.KindBudget, Text: "hermes is over budget"}},
		{"a chain budget", func(n router.Notices) error { return n.NotifyChain(ctx, "the chain is over budget") },
			router.Notice{Kind: router.KindChainBudget, Text: "the chain is over budget"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch := &fakeChannel{name: "RocketChat"}
			n := router.Notices{Router: router.New([]router.Channel{ch}, memstore.New(), discard())}
			if err := tt.notify(n); err != nil {
				t.Fatalf("notify: %v", err)
			}
			got := ch.sent()
			if len(got) != 1 || got[0].Kind != tt.want.Kind || got[0].AgentID != tt.want.AgentID || got[0].Text != tt.want.Text {
				t.Errorf("sent %+v, want one %+v", got, tt.want)
			}
		})
	}
	down := &fakeChannel{name: "RocketChat", err: errRCDown}
	n := router.Notices{Router: router.New([]router.Channel{down}, memstore.New(), discard())}
	if err := n.NotifyBudget(ctx, "over"); err == nil {
		t.Error("NotifyBudget over a channel that is down answered nil, want its error")
	}
}
