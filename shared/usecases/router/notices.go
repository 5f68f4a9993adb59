package router

import "context"

// Notices are the router's notices in the words the other use cases ask
// for them: an agent's text that could not be posted where it was woken
// (the wake's fallback), an agent's used-up daily budget (the run budget)
// and a chain over its budget (the operator's control). Each is a Notice
// of its kind, delivered over the ordered channels.
type Notices struct{ Router *Router }

// NotifyHuman hands an agent's text to the human as an agent notice.
func (n Notices) NotifyHuman(ctx context.Context, agentID, text string) error {
	return n.deliver(ctx, Notice{Kind: KindAgent, AgentID: agentID, Text: text})
}

// NotifyBudget tells the human that an agent used up its daily budget.
func (n Notices) NotifyBudget(ctx context.Context, text string) error {
	return n.deliver(ctx, Notice{Kind: KindBudget, Text: text})
}

// NotifyChain tells the human that a chain used up its budget.
func (n Notices) NotifyChain(ctx context.Context, text string) error {
	return n.deliver(ctx, Notice{Kind: KindChainBudget, Text: text})
}

func (n Notices) deliver(ctx context.Context, notice Notice) error {
	_, err := n.Router.Deliver(ctx, notice)
	return err
}
