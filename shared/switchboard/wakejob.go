package switchboard

import "context"

// WakeJob is one wake of one agent: what the webhook or the poll hands to
// the worker (a Lambda async invoke in AWS, an in-process pool locally).
type WakeJob struct {
	AgentID string `json:"agentId"`
	Source  string `json:"source"` // "rocketchat-webhook", "rocketchat-poll", …
	Text    string `json:"text"`   // the wake message, already framed as untrusted
	// Pending names a message the worker still has to fetch and judge
	// (webhook deliveries carry no mentions[], files or link previews);
	// when set, Text is empty until the worker prepared the job.
	Pending    *PendingMessage `json:"pending,omitempty"`
	ReplyTo    *ReplyTo        `json:"replyTo,omitempty"`
	MessageIDs []string        `json:"messageIds,omitempty"`
	// Claim names the wake claims the job works on and the owner that took
	// them; nil for jobs that guard no message (approval follow-ups).
	Claim  *WakeJobClaim `json:"claim,omitempty"`
	Parent *RunContext   `json:"parent,omitempty"`
	// ApprovalID names an approved call for the worker to run (once) in
	// place of an agent run; the approval's own follow-up job then tells
	// the agent. The deciding functions hand approved calls over this way.
	ApprovalID string `json:"approvalId,omitempty"`
}

// Lane is the queue a job waits in: its agent's, so that one agent's runs
// happen one after another in the order they came (the local pool's lanes,
// the wake queue's message groups); an approved call has a lane of its own.
func (j WakeJob) Lane() string {
	if j.ApprovalID != "" {
		return "approval-" + j.ApprovalID
	}
	return "agent-" + j.AgentID
}

// WakeJobClaim is the wake claims of a job and their owner. A retry of the
// same job (same owner) begins them again; another owner's take-over ends
// it.
type WakeJobClaim struct {
	Keys  []string `json:"keys"`
	Owner string   `json:"owner"`
}

// ReplayKey names the wake for a run's replay guard: the job's first claim
// key, the same for every attempt (a retry or a take-over after a crash;
// the owner changes, the key does not). "" for a job without a claim: its
// run's calls are never replayed.
func (j WakeJob) ReplayKey() string {
	if j.Claim == nil || len(j.Claim.Keys) == 0 {
		return ""
	}
	return j.Claim.Keys[0]
}

// PendingMessage is a message to fetch and judge in the worker.
type PendingMessage struct {
	RoomID    string `json:"roomId"`
	MessageID string `json:"messageId"`
	ThreadID  string `json:"threadId,omitempty"`
	// Edited: the delivery says the message was edited. The worker
	// believes only the editedAt of the message it fetches, and claims
	// each real edit once.
	Edited bool `json:"edited,omitempty"`
}

// WakeDispatcher hands a job to a worker and returns at once. It returns
// EUNAVAILABLE when the job could not be queued (the caller answers 503 or
// leaves its marker unmoved so that the job comes again).
type WakeDispatcher interface {
	Dispatch(ctx context.Context, job WakeJob) error
}
