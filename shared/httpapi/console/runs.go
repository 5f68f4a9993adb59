package console

import (
	"context"
	"sync"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// runQueries bounds the agents' run queries in flight at once.
const runQueries = 4

// runsOfAgents is each agent's runs since then (runs[i] for agents[i]): one
// index query per agent, at most runQueries at once, so that a page over
// ten agents waits for about three round trips rather than ten. The first
// error ends it.
func (c *Console) runsOfAgents(ctx context.Context, agents []Agent, since time.Time) ([][]sb.Receipt, error) {
	runs := make([][]sb.Receipt, len(agents))
	errs := make([]error, len(agents))
	slots := make(chan struct{}, runQueries)
	var wg sync.WaitGroup
	for i, a := range agents {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			runs[i], errs[i] = c.o.Reader.AgentRunsSince(ctx, a.ID, since)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return runs, nil
}
