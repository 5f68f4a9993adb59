package wake

import (
	"context"
	"fmt"
	"time"

	"github.com/switchboard-dev/switchboard/shared/agentrun"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// Worker runs one wake job: it takes the agent's lease (runs of one agent
// never overlap, AG2), runs the agent, and sends the final answer back to
// the room/thread of the wake unless the agent already answered there (RC8).
type Worker struct {
	Leases sb.Leases
	// Prepare turns a webhook job (Pending set) into a runnable one, or
	// reports that it must not wake the agent after all.
	Prepare func(ctx context.Context, job Job) (Job, bool, error)
	// Run runs the agent on the job (app wiring: engine + model + tools).
	Run func(ctx context.Context, job Job) (agentrun.Result, error)
	// Reply posts text to the job's ReplyTo as the agent, within run.
	Reply func(ctx context.Context, job Job, run sb.RunContext, text string) error
	// LeaseFor must exceed the longest run; a crashed holder's lease simply
	// expires, so nobody waits forever.
	LeaseFor time.Duration
	// WaitFor bounds the wait for a busy agent. After it the job fails with
	// EUNAVAILABLE and comes again (Lambda async retry; locally it is logged).
	// A bounded wait is what makes waiting deadlock-free.
	WaitFor time.Duration
	Now     func() time.Time
	Sleep   func(ctx context.Context, d time.Duration) error
}

// Handle implements the worker for one job.
func (w *Worker) Handle(ctx context.Context, job Job) error {
	now, sleep := w.Now, w.Sleep
	if now == nil {
		now = time.Now
	}
	if sleep == nil {
		sleep = sleepCtx
	}
	if job.Pending != nil {
		prepared, ok, err := w.Prepare(ctx, job)
		if err != nil {
			return fmt.Errorf("wake %s: prepare message %s: %w", job.AgentID, job.Pending.MessageID, err)
		}
		if !ok {
			return nil
		}
		job = prepared
	}
	key, holder := "agent#"+job.AgentID, sb.NewID(now())
	deadline := now().Add(w.WaitFor)
	backoff := 200 * time.Millisecond
	for {
		ok, err := w.Leases.Acquire(ctx, key, holder, now().Add(w.LeaseFor))
		if err != nil {
			return fmt.Errorf("wake %s: lease: %w", job.AgentID, err)
		}
		if ok {
			break
		}
		if !now().Before(deadline) {
			return sb.E("wake.worker", sb.EUNAVAILABLE, fmt.Sprintf("agent %s is busy with another run; the wake will be retried", job.AgentID))
		}
		if err := sleep(ctx, backoff); err != nil {
			return err
		}
		backoff = min(2*backoff, 2*time.Second)
	}
	defer func() { _ = w.Leases.Release(context.WithoutCancel(ctx), key, holder) }()

	res, err := w.Run(ctx, job)
	if err != nil {
		return fmt.Errorf("wake %s: run: %w", job.AgentID, err)
	}
	if job.ReplyTo == nil || res.Answer == "" || AlreadyAnswered(res, job.ReplyTo) {
		return nil
	}
	if err := w.Reply(ctx, job, res.Run, res.Answer); err != nil {
		return fmt.Errorf("wake %s: reply to %s: %w", job.AgentID, job.ReplyTo.RoomID, err)
	}
	return nil
}

// AlreadyAnswered reports whether the run itself posted successfully into
// the reply room (send_message, reply or send_file): then the automatic
// reply would say the same thing twice (RC8). The RocketChat tool reports the
// room id it posted to as "roomId".
func AlreadyAnswered(res agentrun.Result, to *ReplyTo) bool {
	for _, c := range res.Calls {
		if c.Tool != "RocketChat" || c.Envelope.Status != "ok" {
			continue
		}
		switch c.Action {
		case "send_message", "reply", "send_file":
			if rid, _ := c.Envelope.Data["roomId"].(string); rid != "" && rid == to.RoomID {
				return true
			}
		}
	}
	return false
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
