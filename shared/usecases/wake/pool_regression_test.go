package wake_test

// Exposes a data race in shared/usecases/wake/pool.go: Dispatch sends on p.jobs while
// Close closes it, with no synchronisation between the two; the recover()
// in Dispatch hides the "send on closed channel" panic but `go test -race`
// reports the race (runtime.chansend vs runtime.closechan). A webhook that
// arrives during shutdown (dev listener closing) hits exactly this.
// Run: cp into shared/usecases/wake && go test -race -run TestPoolDispatchDuringClose ./shared/usecases/wake

import (
	"context"
	"sync"
	"testing"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/wake"
)

func TestPoolDispatchDuringClose(t *testing.T) {
	log, _ := newLog()
	release := make(chan struct{})
	p := wake.NewPool(1, 4, func(ctx context.Context, _ sb.WakeJob) error { <-release; return nil }, log)
	if err := p.Dispatch(context.Background(), sb.WakeJob{AgentID: "running"}); err != nil {
		t.Fatal(err)
	}
	closed := make(chan struct{})
	waiting := &doneWatched{Context: context.Background(), asked: make(chan struct{})}
	go func() { p.Close(waiting); close(closed) }()
	<-waiting.asked // Close has closed the queue and waits for the running job
	if err := p.Dispatch(context.Background(), sb.WakeJob{AgentID: "late"}); sb.ErrorCode(err) != sb.EUNAVAILABLE {
		t.Errorf("Dispatch during Close: %v, want EUNAVAILABLE", err)
	}
	close(release)
	<-closed
}

// doneWatched is a context that tells when its Done is first asked for:
// Close asks once it has closed the queue, to wait for the running jobs.
type doneWatched struct {
	context.Context
	once  sync.Once
	asked chan struct{}
}

func (c *doneWatched) Done() <-chan struct{} {
	c.once.Do(func() { close(c.asked) })
	return c.Context.Done()
}
