package askagent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/taskerr"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// Row is one AgentMessages row: the payload of the machine's record Tasks
// (a timeout, a failure), and what Guard and Answerer record themselves.
type Row struct {
	Op string `json:"op,omitempty"`
	// Key names the row within the execution: "<execution id>#request" or
	// "#response". A retried Task sends the same key and time, so the
	// row's id and place are the same and the store answers "exists".
	Key       string `json:"key"`
	From      string `json:"from"`
	To        string `json:"to"`
	Channel   string `json:"channel"`
	Direction string `json:"direction"`
	Status    string `json:"status"`
	Content   string `json:"content"`
	// Reason says why a question was refused, timed out or failed; it
	// becomes the content of a response row that has no answer.
	Reason      string `json:"reason,omitempty"`
	RunID       string `json:"runId,omitempty"`
	ParentRunID string `json:"parentRunId,omitempty"`
	RootRunID   string `json:"rootRunId"`
	// OccurredAt comes from the execution (its start), or is the time the
	// answer was given; never the clock of a record Task: a retry must not
	// move the row.
	OccurredAt time.Time `json:"occurredAt"`
	// AfterSeconds is added to OccurredAt (a timeout happens that long
	// after the question).
	AfterSeconds int `json:"afterSeconds,omitempty"`
	// Question, on a response row that has no answer, is the question
	// asked: its request row is written with the response (the answering
	// Task writes it only with an answer). OccurredAt is
	// then the execution's start, the request row's time.
	Question string `json:"question,omitempty"`
}

// Recorder writes the machine's rows; Log is the core's scrubbing log
// (sb.ScrubbingMessages), so contents are scrubbed before they are stored.
// A row and its search rows are one store request (Log.RecordAll).
type Recorder struct {
	Log sb.AgentMessageLog
}

// Record stores r. A row written before (a retried Task) is written again,
// the same: success. A temporarily unreachable store is a
// *taskerr.TransientError (the machine retries it); anything else a
// *taskerr.PermanentError.
func (rec *Recorder) Record(ctx context.Context, r Row) error {
	return rec.record(ctx, sb.MessageBatch{}, r)
}

// RecordAnswer stores a question's request row and its answer's response
// row with the receipt of the run that gave the answer, and gives the
// answering agent's lease back, in one go; it answers as Record does.
func (rec *Recorder) RecordAnswer(ctx context.Context, question, answer Row, receipt sb.Receipt, lease string) error {
	return rec.record(ctx, sb.MessageBatch{Receipt: &receipt, Release: lease}, question, answer)
}

func (rec *Recorder) record(ctx context.Context, b sb.MessageBatch, rows ...Row) error {
	for _, r := range rows {
		if r.Question != "" {
			execution, _, _ := strings.Cut(r.Key, "#")
			rows = append(rows, requestRow(execution, r.To, r.From, r.Question, r.ParentRunID, r.RootRunID, r.OccurredAt))
		}
	}
	for _, r := range rows {
		m, err := r.message()
		if err != nil {
			return &taskerr.PermanentError{Message: err.Error()}
		}
		b.Messages = append(b.Messages, m)
	}
	// A row's id comes from the execution, its time from the execution or
	// the one answer (a started run is never retried), so a retried Task
	// overwrites its own rows: the write needs no condition.
	err := rec.Log.RecordAll(ctx, b)
	switch code := sb.ErrorCode(err); {
	case err == nil:
		return nil
	case code == sb.EUNAVAILABLE || code == sb.ERATELIMITED || errors.Is(err, context.DeadlineExceeded):
		return &taskerr.TransientError{Message: "agent message: " + sb.ErrorMessage(err)}
	default:
		return &taskerr.PermanentError{Message: "agent message: " + sb.ErrorMessage(err)}
	}
}

// message is the AgentMessage of r. Its id is derived from the key, so
// that every attempt writes the same row: a hash of the execution, then
// the part ("request" sorts before "response", which keeps a question
// before an answer recorded at the same time).
func (r Row) message() (sb.AgentMessage, error) {
	if r.Key == "" || r.OccurredAt.IsZero() {
		return sb.AgentMessage{}, fmt.Errorf("agentMessage.record: a row needs key and occurredAt")
	}
	execution, part, _ := strings.Cut(r.Key, "#")
	sum := sha256.Sum256([]byte(execution))
	id := hex.EncodeToString(sum[:12])
	if part != "" {
		id += "-" + part
	}
	m := sb.AgentMessage{
		ID: id, From: r.From, To: r.To,
		Channel: sb.Channel(r.Channel), Direction: sb.Direction(r.Direction), Status: sb.MessageStatus(r.Status),
		Content: r.Content, Reason: r.Reason, RunID: r.RunID, ParentRunID: r.ParentRunID, RootRunID: r.RootRunID,
		OccurredAt: r.OccurredAt.Add(time.Duration(r.AfterSeconds) * time.Second).UTC(),
	}
	if m.Content == "" {
		m.Content = r.Reason
	}
	if m.RunID == "" {
		// No answering run to name (it timed out or never started): the
		// row belongs to the asking run.
		m.RunID, m.ParentRunID = m.ParentRunID, ""
	}
	if m.RootRunID == "" {
		m.RootRunID = m.RunID
	}
	return m, m.Validate()
}
