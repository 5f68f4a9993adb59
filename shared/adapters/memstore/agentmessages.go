package memstore

import (
	"context"
	"encoding/base64"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

var _ switchboard.AgentMessageStore = (*AgentMessages)(nil)

// AgentMessages is an in-memory AgentMessageStore with the DynamoDB
// adapter's keys (pair, time, id), orderings, cursors and errors. Content of
// any length stays in memory. The zero value is ready to use.
type AgentMessages struct {
	// Receipts is where RecordAll puts a receipt (the DynamoDB adapter's
	// receipts table) and gives a lease back; nil: RecordAll refuses a
	// receipt or a lease with EINTERNAL.
	Receipts *Store

	mu   sync.Mutex
	rows map[string]switchboard.AgentMessage // by pair \x00 time#id
}

// msgSK is the adapter's sort key of a message.
func msgSK(m switchboard.AgentMessage) string { return timeKey(m.OccurredAt) + "#" + m.ID }

// Record stores m once; ECONFLICT for the same pair, time and id.
func (a *AgentMessages) Record(_ context.Context, m switchboard.AgentMessage) error {
	if err := m.Validate(); err != nil {
		return err
	}
	m.PairKey = switchboard.PairKey(m.From, m.To)
	m.OccurredAt = m.OccurredAt.UTC()
	key := m.PairKey + "\x00" + msgSK(m)
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.rows[key]; ok {
		return switchboard.E("agentMessages.record", switchboard.ECONFLICT,
			"already recorded; a repeated write is not applied twice")
	}
	if a.rows == nil {
		a.rows = map[string]switchboard.AgentMessage{}
	}
	a.rows[key] = m
	return nil
}

// RecordAll stores b.Messages, overwriting a message of the same pair,
// time and id; b.Receipt in Receipts, overwriting one of the same agent,
// start and run id; and deletes b.Release's lease in Receipts whoever
// holds it (as the DynamoDB adapter's batch does). Everything is checked
// before anything is stored.
func (a *AgentMessages) RecordAll(_ context.Context, b switchboard.MessageBatch) error {
	const op = "agentMessages.recordAll"
	if b.Receipt != nil {
		if err := checkReceipt(op, *b.Receipt); err != nil {
			return err
		}
	}
	if b.Release != "" {
		if err := switchboard.CheckStateKey(op, "lease", b.Release); err != nil {
			return err
		}
	}
	if (b.Receipt != nil || b.Release != "") && a.Receipts == nil {
		return switchboard.E(op, switchboard.EINTERNAL, "this message store keeps no receipts or leases")
	}
	for _, m := range b.Messages {
		if err := m.Validate(); err != nil {
			return err
		}
	}
	a.mu.Lock()
	if a.rows == nil {
		a.rows = map[string]switchboard.AgentMessage{}
	}
	for _, m := range b.Messages {
		m.PairKey = switchboard.PairKey(m.From, m.To)
		m.OccurredAt = m.OccurredAt.UTC()
		a.rows[m.PairKey+"\x00"+msgSK(m)] = m
	}
	a.mu.Unlock()
	if b.Receipt != nil {
		if err := a.Receipts.putReceipt(op, *b.Receipt, true); err != nil {
			return err
		}
	}
	if b.Release != "" {
		a.Receipts.dropLease(b.Release)
	}
	return nil
}

// Pair lists a pair's messages.
func (a *AgentMessages) Pair(_ context.Context, x, y string, q switchboard.MessageQuery) (switchboard.MessagePage, error) {
	if x == "" || y == "" {
		return switchboard.MessagePage{}, switchboard.E("agentMessages.pair", switchboard.EINVALID, "a pair needs two agent ids")
	}
	pair := switchboard.PairKey(x, y)
	return a.list("agentMessages.pair", q, func(m switchboard.AgentMessage) bool { return m.PairKey == pair })
}

// Agent lists every message from or to agentID.
func (a *AgentMessages) Agent(_ context.Context, agentID string, q switchboard.MessageQuery) (switchboard.MessagePage, error) {
	if agentID == "" {
		return switchboard.MessagePage{}, switchboard.E("agentMessages.agent", switchboard.EINVALID, "an agent id is needed")
	}
	return a.list("agentMessages.agent", q, func(m switchboard.AgentMessage) bool { return m.From == agentID || m.To == agentID })
}

// Chain lists one run chain's messages.
func (a *AgentMessages) Chain(_ context.Context, rootRunID string, q switchboard.MessageQuery) (switchboard.MessagePage, error) {
	if rootRunID == "" {
		return switchboard.MessagePage{}, switchboard.E("agentMessages.chain", switchboard.EINVALID, "a root run id is needed")
	}
	return a.list("agentMessages.chain", q, func(m switchboard.AgentMessage) bool { return m.RootRunID == rootRunID })
}

// All lists every pair's messages within the range.
func (a *AgentMessages) All(_ context.Context, q switchboard.MessageQuery) (switchboard.MessagePage, error) {
	if err := q.CheckRange(); err != nil {
		return switchboard.MessagePage{}, err
	}
	return a.list("agentMessages.all", q, func(switchboard.AgentMessage) bool { return true })
}

// Search keeps messages whose IndexTerms contain every query word.
func (a *AgentMessages) Search(_ context.Context, s switchboard.MessageSearch) (switchboard.MessagePage, error) {
	terms, err := switchboard.QueryTerms(s.Text)
	if err != nil {
		return switchboard.MessagePage{}, err
	}
	if err := s.CheckScope(); err != nil {
		return switchboard.MessagePage{}, err
	}
	return a.list("agentMessages.search", s.MessageQuery, func(m switchboard.AgentMessage) bool {
		if !s.InScope(m.PairKey) {
			return false
		}
		have := switchboard.IndexTerms(m.Content)
		for _, t := range terms {
			if !slices.Contains(have, t) {
				return false
			}
		}
		return true
	})
}

// list pages the matching messages in sort-key order, after the cursor.
func (a *AgentMessages) list(op string, q switchboard.MessageQuery, match func(switchboard.AgentMessage) bool) (switchboard.MessagePage, error) {
	if err := q.Check(); err != nil {
		return switchboard.MessagePage{}, err
	}
	cursor, err := decodeMsgCursor(op, q.Cursor)
	if err != nil {
		return switchboard.MessagePage{}, err
	}
	a.mu.Lock()
	var all []switchboard.AgentMessage
	for _, m := range a.rows {
		sk := msgSK(m)
		switch {
		case !match(m), !q.Wants(m.Channel),
			!q.Since.IsZero() && m.OccurredAt.Before(q.Since),
			!q.Until.IsZero() && !m.OccurredAt.Before(q.Until),
			cursor != "" && !q.OldestFirst && sk >= cursor,
			cursor != "" && q.OldestFirst && sk <= cursor:
			continue
		}
		all = append(all, m)
	}
	a.mu.Unlock()
	slices.SortFunc(all, func(x, y switchboard.AgentMessage) int { return strings.Compare(msgSK(x), msgSK(y)) })
	if !q.OldestFirst {
		slices.Reverse(all)
	}
	page := switchboard.MessagePage{Messages: []switchboard.AgentMessage{}}
	limit := q.PageSize()
	if len(all) > limit {
		all = all[:limit]
		page.NextCursor = base64.RawURLEncoding.EncodeToString([]byte(msgSK(all[limit-1])))
	}
	page.Messages = append(page.Messages, all...)
	return page, nil
}

// decodeMsgCursor accepts what list hands out, like the adapter.
func decodeMsgCursor(op, c string) (string, error) {
	if c == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err == nil && len(b) > len(timeLayout) && b[len(timeLayout)] == '#' {
		if _, perr := time.Parse(timeLayout, string(b[:len(timeLayout)])); perr == nil {
			return string(b), nil
		}
	}
	return "", switchboard.E(op, switchboard.EINVALID, "cursor is not one this store handed out; start again without it")
}
