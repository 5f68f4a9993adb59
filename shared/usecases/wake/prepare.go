package wake

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// Preparer turns a webhook job (Pending) into a runnable one: it fetches the
// message as the agent, applies the full wake rules and the hourly
// throttle, and writes the wake message.
type Preparer struct {
	Counters sb.Counters
	Claims   Claims
	// Wakes, when set, lets an edit that was handled already stop here,
	// before it counts against the hourly throttle.
	Wakes WakeStore
	Log   *slog.Logger
	Loc   *time.Location
	Now   func() time.Time
}

// Prepare reports false (and no error) when the message must not wake the
// agent after all.
func (p *Preparer) Prepare(ctx context.Context, job sb.WakeJob, src sb.ChatMessageSource, rules Rules, maxWakesPerHour int) (sb.WakeJob, bool, error) {
	if job.Pending == nil {
		return job, true, nil
	}
	m, err := src.GetMessage(ctx, job.Pending.MessageID)
	if err != nil {
		return job, false, err
	}
	info, err := src.RoomInfo(ctx, job.Pending.RoomID)
	if err != nil {
		return job, false, err
	}
	room := Room{ID: info.ID, Name: info.Name, Type: info.Type}
	if info.Type == sb.RoomDirect {
		room.Name = counterpart(info.Usernames, rules.Username)
	}
	if job.Pending.Edited {
		// Only the fetched message says whether and when it was edited.
		if m.EditedAt.IsZero() {
			p.Log.WarnContext(ctx, "webhook says the message was edited, but it never was; ignored", "agent", job.AgentID, "message", m.ID)
			return job, false, nil
		}
		key := EditClaimKey(job.AgentID, m.ID, m.EditedAt)
		if p.Wakes != nil {
			c, found, err := p.Wakes.Get(ctx, key)
			if err != nil {
				return job, false, err
			}
			if found && (c.State == sb.ClaimDone || (c.Live(p.Now()) && (job.Claim == nil || c.Owner != job.Claim.Owner))) {
				return job, false, nil // this edit is handled or being handled
			}
		}
		owner := ""
		if job.Claim != nil {
			owner = job.Claim.Owner
		}
		job.Claim = &sb.WakeJobClaim{Keys: []string{key}, Owner: owner}
	}
	if v := rules.Decide(room, m); !v.Wake {
		p.Log.InfoContext(ctx, "webhook message does not wake", "agent", job.AgentID, "message", m.ID, "reason", v.Reason)
		return job, false, nil
	}
	allowed, err := Throttle(ctx, p.Counters, p.Claims, p.Log, job.AgentID, room.ID, maxWakesPerHour, p.Now())
	if err != nil || !allowed {
		return job, false, err
	}
	job.Text = FormatMessages(room, m.ThreadID, []sb.ChatMessage{m}, p.Loc)
	job.ReplyTo = &ReplyTo{RoomID: room.ID, RoomName: room.Name, RoomType: string(room.Type), ThreadID: m.ThreadID}
	job.MessageIDs = []string{m.ID}
	job.Pending = nil
	return job, true, nil
}

// EditClaimKey is the wake claim of one edit of a message: an edit is known
// by its editedAt, so each real edit wakes an agent at most once.
func EditClaimKey(agent, messageID string, editedAt time.Time) string {
	return ClaimKey(agent, messageID) + "#edit#" + strconv.FormatInt(editedAt.UnixMilli(), 10)
}

// counterpart is the other member of a DM.
func counterpart(usernames []string, self string) string {
	for _, u := range usernames {
		if !strings.EqualFold(u, self) {
			return u
		}
	}
	return self // a DM with oneself
}
