// Package control is the operator's hands on work that is running: a
// budget per run chain, pausing and resuming an agent, and stopping a
// chain. Its state lives in the state table: a paused#<agent> value while
// an agent is paused (with the wakes that wait for it under held#<agent>),
// a stopped#<root> marker once a chain is stopped. The engine asks Check
// before every model call, the runner before every hop (a task's wake, an
// approval's or a delivery's follow-up), the ask_agent guard before every
// question; so a stop or a spent budget takes effect within one model step.
package control

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/agentrun"
)

// Reasons a run ends, or a hop is refused, before its work is done: the
// receipt's outcome and reason, the denied row's reason prefix.
const (
	ReasonChainBudget = agentrun.OutcomeChainBudget  // the chain has spent its chainBudgetUsd
	ReasonStopped     = agentrun.OutcomeChainStopped // the operator stopped the chain
)

// PausedKey is the state-table value of a paused agent.
func PausedKey(agentID string) string { return "paused#" + agentID }

// StoppedKey is the state-table marker of a stopped chain.
func StoppedKey(rootRunID string) string { return "stopped#" + rootRunID }

// heldKey holds the wakes of a paused agent until it is resumed.
func heldKey(agentID string) string { return "held#" + agentID }

// budgetNoticeKey is the once-only marker of a chain's budget notice.
func budgetNoticeKey(rootRunID string) string { return "chain-budget#" + rootRunID }

// executionsKey lists the pipeline executions a chain started.
func executionsKey(rootRunID string) string { return "chain-executions#" + rootRunID }

// How long the markers live: longer than any chain runs (a task waits
// days at most before the watchdog reports it).
const (
	stoppedFor    = 30 * 24 * time.Hour
	noticeFor     = 30 * 24 * time.Hour
	executionsFor = 30 * 24 * time.Hour
)

// MaxHeld bounds the wakes that wait for one paused agent (the held list
// is one state value of at most 64 KB); a wake beyond it is dropped and
// logged.
const MaxHeld = 50

// Markers are once-only keys (the state table's Claim and Unclaim).
type Markers interface {
	Claim(ctx context.Context, key string, expires time.Time) (bool, error)
	Unclaim(ctx context.Context, key string) error
}

// ChainCosts sums a chain's receipts with one index query
// (sb.ReceiptStore's ChainCost).
type ChainCosts interface {
	ChainCost(ctx context.Context, rootRunID string) (sb.ChainCost, error)
}

// Limits gives the chain budget in USD that applies to a run of agentID
// (its agents[].chainBudgetUsd, else instance.chainBudgetUsd; 0 = none).
type Limits interface {
	ChainBudget(agentID string) float64
}

// Notifier tells the human (the router). An error gives the chain's
// notice marker back, so that the next check tries again.
type Notifier interface {
	NotifyChain(ctx context.Context, text string) error
}

// Executions stops a Step Functions execution (shared/adapters/sfn's
// Executions: StopExecution). stopped is false, with no error, for one
// that has ended already.
type Executions interface {
	Stop(ctx context.Context, executionARN, cause string) (stopped bool, err error)
}

// Control is the pause, stop and chain-budget service.
type Control struct {
	KV       sb.KV
	Markers  Markers
	Receipts ChainCosts
	Audit    sb.AuditStore
	Limits   Limits
	Notifier Notifier // nil: the budget notice is only logged
	// Dispatch queues the held wakes again on resume; nil: they are
	// dropped (logged).
	Dispatch sb.WakeDispatcher
	// Executions stops a stopped chain's waiting pipeline executions;
	// nil: none are stopped (logged).
	Executions Executions
	// ChainLink is the console page of a chain (nil: the notice names
	// the root run id only).
	ChainLink func(rootRunID string) string
	Now       func() time.Time
	Log       *slog.Logger
}

// switchState is the value of a paused#<agent> or stopped#<root> key.
type switchState struct {
	By string    `json:"by"`
	At time.Time `json:"at"`
}

// Paused reports whether agentID is paused: one read.
func (c *Control) Paused(ctx context.Context, agentID string) (bool, error) {
	_, found, err := c.KV.Get(ctx, PausedKey(agentID))
	if err != nil {
		return false, fmt.Errorf("control: is %s paused: %w", agentID, err)
	}
	return found, nil
}

// Stopped reports whether the chain rootRunID was stopped: one read.
func (c *Control) Stopped(ctx context.Context, rootRunID string) (bool, error) {
	if rootRunID == "" {
		return false, nil
	}
	_, found, err := c.KV.Get(ctx, StoppedKey(rootRunID))
	if err != nil {
		return false, fmt.Errorf("control: is chain %s stopped: %w", rootRunID, err)
	}
	return found, nil
}

// Pause stops agentID taking new runs until Resume: its wakes wait (Hold).
// by says who did it ("console", "telegram:<user id>"); it is audited.
func (c *Control) Pause(ctx context.Context, agentID, by string) error {
	v, _ := json.Marshal(switchState{By: by, At: c.now().UTC()})
	if err := c.KV.Put(ctx, PausedKey(agentID), string(v), time.Time{}); err != nil {
		return fmt.Errorf("control: pause %s: %w", agentID, err)
	}
	c.audit(ctx, "pause", agentID, sb.RunContext{}, by, "")
	c.log().InfoContext(ctx, "agent paused", "agent", agentID, "by", by)
	return nil
}

// Resume lets agentID run again and queues the wakes that waited for it;
// it reports how many. Resuming an agent that is not paused is fine.
func (c *Control) Resume(ctx context.Context, agentID, by string) (int, error) {
	// A value that expired a minute ago is absent to every reader.
	if err := c.KV.Put(ctx, PausedKey(agentID), "resumed", c.now().Add(-time.Minute)); err != nil {
		return 0, fmt.Errorf("control: resume %s: %w", agentID, err)
	}
	jobs, err := c.takeHeld(ctx, agentID)
	if err != nil {
		return 0, err
	}
	queued := 0
	for _, job := range jobs {
		if c.Dispatch == nil {
			c.log().WarnContext(ctx, "a held wake was dropped: nothing queues wakes here", "agent", agentID)
			continue
		}
		if err := c.Dispatch.Dispatch(ctx, job); err != nil {
			c.log().ErrorContext(ctx, "a held wake could not be queued again", "agent", agentID, "err", err)
			continue
		}
		queued++
	}
	c.audit(ctx, "resume", agentID, sb.RunContext{}, by, fmt.Sprintf("%d waiting wakes queued", queued))
	c.log().InfoContext(ctx, "agent resumed", "agent", agentID, "by", by, "queued", queued)
	return queued, nil
}

// Stopped chain: what Stop did.
type StopReport struct {
	RootRunID  string
	Executions int // pipeline executions stopped
}

// Stop stops the chain rootRunID: its running runs end before their next
// model call, its queued and later wakes are dropped, and the pipeline
// executions it started are stopped. Stopping it again is fine.
func (c *Control) Stop(ctx context.Context, rootRunID, by string) (StopReport, error) {
	rep := StopReport{RootRunID: rootRunID}
	if rootRunID == "" {
		return rep, sb.E("control.stop", sb.EINVALID, "name the chain to stop by its root run id (the console's chain page shows it)")
	}
	v, _ := json.Marshal(switchState{By: by, At: c.now().UTC()})
	if err := c.KV.Put(ctx, StoppedKey(rootRunID), string(v), c.now().Add(stoppedFor)); err != nil {
		return rep, fmt.Errorf("control: stop chain %s: %w", rootRunID, err)
	}
	arns, err := c.executions(ctx, rootRunID)
	if err != nil {
		c.log().ErrorContext(ctx, "the chain's pipeline executions could not be read; they run on", "root", rootRunID, "err", err)
	}
	for _, arn := range arns {
		if c.stopExecution(ctx, rootRunID, arn) {
			rep.Executions++
		}
	}
	c.audit(ctx, "stop", "", sb.RunContext{RootRunID: rootRunID}, by, fmt.Sprintf("%d pipeline executions stopped", rep.Executions))
	c.log().InfoContext(ctx, "chain stopped", "root", rootRunID, "by", by, "executions", rep.Executions)
	return rep, nil
}

// stopExecution stops one of the chain's pipeline executions and reports
// whether it was still running; a failure is logged (the stop's answer
// counts only what was stopped).
func (c *Control) stopExecution(ctx context.Context, rootRunID, arn string) bool {
	if c.Executions == nil {
		c.log().WarnContext(ctx, "a stopped chain's pipeline execution runs on: Step Functions is not set up here", "root", rootRunID, "execution", arn)
		return false
	}
	stopped, err := c.Executions.Stop(ctx, arn, "the operator stopped chain "+rootRunID)
	if err != nil {
		c.log().ErrorContext(ctx, "a stopped chain's pipeline execution could not be stopped", "root", rootRunID, "execution", arn, "err", err)
		return false
	}
	if stopped {
		c.log().InfoContext(ctx, "a stopped chain's pipeline execution was stopped", "root", rootRunID, "execution", arn)
	}
	return stopped
}

// audit writes the audit entry of an operator's action: tool "control",
// the action, the agent or the chain, and who did it.
func (c *Control) audit(ctx context.Context, action, agentID string, run sb.RunContext, by, detail string) {
	if c.Audit == nil {
		return
	}
	args, _ := json.Marshal(map[string]string{"agent": agentID, "chain": run.RootRunID, "detail": detail})
	now := c.now()
	e := sb.AuditEntry{ID: sb.NewID(now), At: now.UTC(), Run: run, AgentID: agentID, Tool: AuditTool, Action: action,
		Args: string(args), Decision: sb.DecisionAuto, Outcome: sb.OutcomeOK, DecidedBy: by, Origin: "operator"}
	if agentID == "" {
		e.AgentID = "operator"
	}
	if err := c.Audit.Append(context.WithoutCancel(ctx), e); err != nil {
		c.log().ErrorContext(ctx, "control: audit entry not written", "action", action, "agent", agentID, "root", run.RootRunID, "err", err)
	}
}

// AuditTool names the operator's actions in the audit trail.
const AuditTool = "control"

// Hold keeps job until its agent is resumed. A job for the same wake as
// one held already (the same claim) takes its place.
func (c *Control) Hold(ctx context.Context, job sb.WakeJob) error {
	key := heldKey(job.AgentID)
	for range 5 {
		raw, found, err := c.KV.Get(ctx, key)
		if err != nil {
			return fmt.Errorf("control: hold a wake of %s: %w", job.AgentID, err)
		}
		var jobs []sb.WakeJob
		if found {
			_ = json.Unmarshal([]byte(raw), &jobs)
		} else {
			raw = ""
		}
		if r := job.ReplayKey(); r != "" {
			jobs = slices.DeleteFunc(jobs, func(j sb.WakeJob) bool { return j.ReplayKey() == r })
		}
		if len(jobs) >= MaxHeld {
			c.log().WarnContext(ctx, "a paused agent's wake was dropped: too many wait already", "agent", job.AgentID, "held", len(jobs))
			return nil
		}
		jobs = append(jobs, job)
		b, _ := json.Marshal(jobs)
		err = c.KV.PutIf(ctx, key, raw, string(b), time.Time{})
		if sb.ErrorCode(err) == sb.ECONFLICT {
			continue
		}
		if sb.ErrorCode(err) == sb.EINVALID {
			c.log().WarnContext(ctx, "a paused agent's wake was dropped: the waiting wakes fill their state value", "agent", job.AgentID)
			return nil
		}
		if err != nil {
			return fmt.Errorf("control: hold a wake of %s: %w", job.AgentID, err)
		}
		c.log().InfoContext(ctx, "wake held: the agent is paused", "agent", job.AgentID, "held", len(jobs))
		return nil
	}
	return sb.E("control.hold", sb.EUNAVAILABLE, "the waiting wakes kept changing; try again")
}

// takeHeld empties agentID's held list and returns what it held.
func (c *Control) takeHeld(ctx context.Context, agentID string) ([]sb.WakeJob, error) {
	key := heldKey(agentID)
	for range 5 {
		raw, found, err := c.KV.Get(ctx, key)
		if err != nil || !found {
			return nil, err
		}
		var jobs []sb.WakeJob
		_ = json.Unmarshal([]byte(raw), &jobs)
		err = c.KV.PutIf(ctx, key, raw, "[]", c.now().Add(-time.Minute))
		if sb.ErrorCode(err) == sb.ECONFLICT {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("control: take the waiting wakes of %s: %w", agentID, err)
		}
		return jobs, nil
	}
	return nil, sb.E("control.resume", sb.EUNAVAILABLE, "the waiting wakes kept changing; try again")
}

// Held returns the wakes waiting for agentID.
func (c *Control) Held(ctx context.Context, agentID string) ([]sb.WakeJob, error) {
	raw, found, err := c.KV.Get(ctx, heldKey(agentID))
	if err != nil || !found {
		return nil, err
	}
	var jobs []sb.WakeJob
	if err := json.Unmarshal([]byte(raw), &jobs); err != nil {
		return nil, sb.Wrap("control.held", sb.EINTERNAL, "the waiting wakes could not be read", err)
	}
	return jobs, nil
}

// RecordExecution remembers that the chain rootRunID started a pipeline
// execution, so that a stop of the chain stops it too. An execution that
// a chain starts while (or just after) it is stopped is stopped here: the
// stop may have read the list before this one was on it.
func (c *Control) RecordExecution(ctx context.Context, rootRunID, executionARN string) error {
	if rootRunID == "" || executionARN == "" {
		return nil
	}
	if err := c.recordExecution(ctx, rootRunID, executionARN); err != nil {
		return err
	}
	stopped, err := c.Stopped(ctx, rootRunID)
	if err != nil {
		return err
	}
	if stopped {
		c.stopExecution(ctx, rootRunID, executionARN)
	}
	return nil
}

func (c *Control) recordExecution(ctx context.Context, rootRunID, executionARN string) error {
	key := executionsKey(rootRunID)
	for range 5 {
		raw, found, err := c.KV.Get(ctx, key)
		if err != nil {
			return fmt.Errorf("control: record execution of chain %s: %w", rootRunID, err)
		}
		var arns []string
		if found {
			_ = json.Unmarshal([]byte(raw), &arns)
		} else {
			raw = ""
		}
		if slices.Contains(arns, executionARN) {
			return nil
		}
		arns = append(arns, executionARN)
		b, _ := json.Marshal(arns)
		err = c.KV.PutIf(ctx, key, raw, string(b), c.now().Add(executionsFor))
		if sb.ErrorCode(err) == sb.ECONFLICT {
			continue
		}
		return err
	}
	return sb.E("control.execution", sb.EUNAVAILABLE, "the chain's executions kept changing; try again")
}

func (c *Control) executions(ctx context.Context, rootRunID string) ([]string, error) {
	raw, found, err := c.KV.Get(ctx, executionsKey(rootRunID))
	if err != nil || !found {
		return nil, err
	}
	var arns []string
	return arns, json.Unmarshal([]byte(raw), &arns)
}

// Check is the gate before a model call or a hop of run (its agent and
// chain): ReasonStopped when the chain was stopped, ReasonChainBudget when
// the chain's receipts plus running (the cost so far of a run that has no
// receipt yet) reach the chain budget that applies to run's agent; "" when
// the work may go on. The first time a chain is found over its budget the
// human is told, once per chain.
func (c *Control) Check(ctx context.Context, run sb.RunContext, running float64) (string, error) {
	root := run.RootRunID
	if root == "" {
		root = run.RunID
	}
	if root == "" {
		return "", nil
	}
	if stopped, err := c.Stopped(ctx, root); err != nil || stopped {
		if stopped {
			return ReasonStopped, nil
		}
		return "", err
	}
	limit := 0.0
	if c.Limits != nil {
		limit = c.Limits.ChainBudget(run.AgentID)
	}
	if limit <= 0 {
		return "", nil
	}
	cost, err := c.Receipts.ChainCost(ctx, root)
	if err != nil {
		return "", fmt.Errorf("control: cost of chain %s: %w", root, err)
	}
	spent := cost.CostUSD + running
	if spent < limit {
		return "", nil
	}
	c.notifyBudget(ctx, root, limit, spent)
	return ReasonChainBudget, nil
}

// notifyBudget tells the human once per chain that it ran out of budget.
func (c *Control) notifyBudget(ctx context.Context, root string, limit, spent float64) {
	key := budgetNoticeKey(root)
	first, err := c.Markers.Claim(ctx, key, c.now().Add(noticeFor))
	if err != nil || !first {
		if err != nil {
			c.log().ErrorContext(ctx, "chain budget notice marker not claimed", "root", root, "err", err)
		}
		return
	}
	text := BudgetText(root, limit, spent, c.link(root))
	if c.Notifier == nil {
		c.log().WarnContext(ctx, "chain over budget; nobody to tell", "root", root, "spent", spent, "limit", limit)
		return
	}
	if err := c.Notifier.NotifyChain(ctx, text); err != nil {
		c.log().ErrorContext(ctx, "chain budget notice not delivered; will retry on the next check", "root", root, "err", err)
		if uerr := c.Markers.Unclaim(context.WithoutCancel(ctx), key); uerr != nil {
			c.log().ErrorContext(ctx, "chain budget notice marker could not be given back", "root", root, "err", uerr)
		}
		return
	}
	c.log().InfoContext(ctx, "chain over budget; the human was told", "root", root, "spent", spent, "limit", limit)
}

// BudgetText is the human's notice of a chain that reached its budget.
func BudgetText(root string, limit, spent float64, link string) string {
	text := fmt.Sprintf("Chain %s reached its budget of $%.2f ($%.4f spent) and was stopped: its runs end and it takes no further steps.",
		root, limit, spent)
	if link != "" {
		text += " See " + link
	}
	return text
}

func (c *Control) link(root string) string {
	if c.ChainLink == nil {
		return ""
	}
	return c.ChainLink(root)
}

func (c *Control) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *Control) log() *slog.Logger {
	if c.Log != nil {
		return c.Log
	}
	return slog.Default()
}
