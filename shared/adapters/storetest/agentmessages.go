package storetest

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

// agentMsg is a delivered ask request from → to at at.
func agentMsg(id, from, to, root string, at time.Time) switchboard.AgentMessage {
	return switchboard.AgentMessage{
		ID: id, From: from, To: to,
		Channel: switchboard.ChannelAsk, Direction: switchboard.DirectionRequest,
		Content: "message " + id, RunID: "run-" + id, RootRunID: root,
		Status: switchboard.MessageDelivered, OccurredAt: at,
	}
}

// stored is m as a store returns it: PairKey set, time in UTC.
func stored(m switchboard.AgentMessage) switchboard.AgentMessage {
	m.PairKey = switchboard.PairKey(m.From, m.To)
	m.OccurredAt = m.OccurredAt.UTC()
	return m
}

func msgIDs(ms []switchboard.AgentMessage) string {
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.ID
	}
	return strings.Join(ids, ",")
}

func record(t *testing.T, s switchboard.AgentMessageStore, ms ...switchboard.AgentMessage) {
	t.Helper()
	for _, m := range ms {
		noErr(t, "record "+m.ID, s.Record(t.Context(), m))
	}
}

// wantIDs fails unless page holds exactly ids in that order.
func wantIDs(t *testing.T, what string, page switchboard.MessagePage, err error, ids string) {
	t.Helper()
	noErr(t, what, err)
	if got := msgIDs(page.Messages); got != ids {
		t.Fatalf("%s: got [%s], want [%s]", what, got, ids)
	}
}

// allPages follows cursors to the end and returns every message.
func allPages(t *testing.T, list func(cursor string) (switchboard.MessagePage, error)) []switchboard.AgentMessage {
	t.Helper()
	var all []switchboard.AgentMessage
	cursor := ""
	for range 100 {
		p, err := list(cursor)
		noErr(t, "page", err)
		all = append(all, p.Messages...)
		if p.NextCursor == "" {
			return all
		}
		cursor = p.NextCursor
	}
	t.Fatal("more than 100 pages: the cursor does not advance")
	return nil
}

// RunAgentMessages checks the AgentMessageStore contract.
func RunAgentMessages(t *testing.T, newStore func(t *testing.T) switchboard.AgentMessageStore) {
	t.Run("RecordTwiceConflicts", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		m := agentMsg("m1", "alice", "bob", "root1", base)
		noErr(t, "first record", s.Record(ctx, m))
		wantCode(t, "second record of the same message", s.Record(ctx, m), switchboard.ECONFLICT)
		p, err := s.Pair(ctx, "alice", "bob", switchboard.MessageQuery{})
		wantIDs(t, "Pair after a repeated record", p, err, "m1")
	})

	t.Run("RecordRejectsInvalid", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		ok := agentMsg("m1", "alice", "bob", "root1", base)
		for _, tc := range []struct {
			name string
			edit func(*switchboard.AgentMessage)
		}{
			{"no id", func(m *switchboard.AgentMessage) { m.ID = "" }},
			{"no from", func(m *switchboard.AgentMessage) { m.From = "" }},
			{"no to", func(m *switchboard.AgentMessage) { m.To = "" }},
			{"no run id", func(m *switchboard.AgentMessage) { m.RunID = "" }},
			{"no root run id", func(m *switchboard.AgentMessage) { m.RootRunID = "" }},
			{"pipe in agent id", func(m *switchboard.AgentMessage) { m.To = "bob|carol" }},
			{"wrong pair key", func(m *switchboard.AgentMessage) { m.PairKey = "bob|alice" }},
			{"bad channel", func(m *switchboard.AgentMessage) { m.Channel = "chat" }},
			{"bad direction", func(m *switchboard.AgentMessage) { m.Direction = "sideways" }},
			{"bad status", func(m *switchboard.AgentMessage) { m.Status = "lost" }},
			{"no time", func(m *switchboard.AgentMessage) { m.OccurredAt = time.Time{} }},
			{"not UTF-8", func(m *switchboard.AgentMessage) { m.Content = "\xff\xfe" }},
		} {
			m := ok
			tc.edit(&m)
			wantCode(t, tc.name, s.Record(ctx, m), switchboard.EINVALID)
		}
		p, err := s.Agent(ctx, "alice", switchboard.MessageQuery{})
		wantIDs(t, "nothing stored", p, err, "")
	})

	t.Run("RoundTripsEveryFieldAndStatus", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		var want []switchboard.AgentMessage
		for i, st := range []switchboard.MessageStatus{switchboard.MessageDelivered, switchboard.MessageFailed,
			switchboard.MessageTimeout, switchboard.MessageDenied} {
			m := switchboard.AgentMessage{
				ID: fmt.Sprintf("m%d", i), PairKey: "alice|bob", From: "bob", To: "alice",
				Channel: switchboard.ChannelTaskComment, Direction: switchboard.DirectionResponse,
				Content: "Zeile 1\nline 2 — ünïcödé ✓ " + string(st), RunID: "r2", ParentRunID: "r1", RootRunID: "r0",
				TaskID: "task-7", Status: st, OccurredAt: base.Add(time.Duration(i) * time.Nanosecond).In(cet),
			}
			if st != switchboard.MessageDelivered {
				m.Reason = "why: " + string(st)
			}
			if i%2 == 1 {
				m.Channel, m.TaskStatus = switchboard.ChannelTaskResult, switchboard.TaskBlocked
			}
			record(t, s, m)
			want = append(want, stored(m))
		}
		p, err := s.Chain(ctx, "r0", switchboard.MessageQuery{OldestFirst: true})
		noErr(t, "Chain", err)
		if !reflect.DeepEqual(p.Messages, want) {
			t.Fatalf("Chain:\n got %+v\nwant %+v", p.Messages, want)
		}
		for _, m := range p.Messages {
			if m.OccurredAt.Location() != time.UTC {
				t.Errorf("%s: OccurredAt in %v, want UTC", m.ID, m.OccurredAt.Location())
			}
		}
	})

	t.Run("PairViewHoldsBothDirections", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		q := agentMsg("q", "alice", "bob", "root1", base)
		a := agentMsg("a", "bob", "alice", "root1", base.Add(time.Second))
		a.Direction = switchboard.DirectionResponse
		record(t, s, q, a, agentMsg("other", "alice", "carol", "root1", base.Add(2*time.Second)))
		for _, pair := range [][2]string{{"alice", "bob"}, {"bob", "alice"}} {
			p, err := s.Pair(ctx, pair[0], pair[1], switchboard.MessageQuery{})
			wantIDs(t, "Pair "+pair[0]+","+pair[1], p, err, "a,q")
			if !reflect.DeepEqual(p.Messages, []switchboard.AgentMessage{stored(a), stored(q)}) {
				t.Fatalf("Pair: got %+v", p.Messages)
			}
		}
		p, err := s.Pair(ctx, "bob", "carol", switchboard.MessageQuery{})
		wantIDs(t, "unknown pair", p, err, "")
		if p.Messages == nil || p.NextCursor != "" {
			t.Fatalf("unknown pair: %+v, want an empty non-nil list and no cursor", p)
		}
	})

	t.Run("FanOutIsOneRowPerRecipient", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		record(t, s,
			agentMsg("to-bob", "alice", "bob", "root1", base),
			agentMsg("to-carol", "alice", "carol", "root1", base),
			agentMsg("to-dave", "alice", "dave", "root1", base))
		for _, peer := range []string{"bob", "carol", "dave"} {
			p, err := s.Pair(ctx, "alice", peer, switchboard.MessageQuery{})
			wantIDs(t, "Pair alice,"+peer, p, err, "to-"+peer)
		}
		p, err := s.Agent(ctx, "alice", switchboard.MessageQuery{OldestFirst: true})
		noErr(t, "Agent", err)
		if len(p.Messages) != 3 {
			t.Fatalf("Agent(alice): %s, want 3 rows", msgIDs(p.Messages))
		}
	})

	t.Run("AgentViewListsEveryPartnerOnce", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		self := agentMsg("self", "alice", "alice", "root3", base.Add(3*time.Second))
		self.Status = switchboard.MessageDenied
		record(t, s,
			agentMsg("ab", "alice", "bob", "root1", base),
			agentMsg("ba", "bob", "alice", "root1", base.Add(time.Second)),
			agentMsg("ca", "carol", "alice", "root2", base.Add(2*time.Second)),
			self,
			agentMsg("de", "dave", "erin", "root4", base.Add(4*time.Second)))
		p, err := s.Agent(ctx, "alice", switchboard.MessageQuery{})
		wantIDs(t, "Agent(alice) newest first", p, err, "self,ca,ba,ab")
		got := allPages(t, func(c string) (switchboard.MessagePage, error) {
			return s.Agent(ctx, "alice", switchboard.MessageQuery{Limit: 1, Cursor: c})
		})
		if msgIDs(got) != "self,ca,ba,ab" {
			t.Fatalf("Agent(alice) one by one: %s", msgIDs(got))
		}
		p, err = s.Agent(ctx, "bob", switchboard.MessageQuery{OldestFirst: true})
		wantIDs(t, "Agent(bob) oldest first", p, err, "ab,ba")
	})

	t.Run("AllListsEveryPairAcrossMonths", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		jan := time.Date(2026, 1, 31, 23, 59, 59, 0, time.UTC)
		feb := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
		apr := time.Date(2026, 4, 2, 12, 0, 0, 0, time.UTC)
		task := agentMsg("feb-task", "carol", "dave", "root2", feb.Add(time.Hour))
		task.Channel = switchboard.ChannelTask
		record(t, s,
			agentMsg("dec", "alice", "bob", "root0", jan.AddDate(0, -1, 0)),
			agentMsg("jan", "alice", "bob", "root1", jan),
			agentMsg("feb", "bob", "carol", "root1", feb),
			task,
			agentMsg("apr", "erin", "erin", "root3", apr),
			agentMsg("may", "alice", "erin", "root4", apr.AddDate(0, 1, 0)))
		q := switchboard.MessageQuery{Since: jan.Add(-time.Hour), Until: apr.Add(time.Hour).In(cet)}
		p, err := s.All(ctx, q)
		wantIDs(t, "All newest first", p, err, "apr,feb-task,feb,jan")
		for _, oldest := range []bool{false, true} {
			got := allPages(t, func(c string) (switchboard.MessagePage, error) {
				q := q
				q.Limit, q.Cursor, q.OldestFirst = 1, c, oldest
				return s.All(ctx, q)
			})
			want := "apr,feb-task,feb,jan"
			if oldest {
				want = "jan,feb,feb-task,apr"
			}
			if msgIDs(got) != want {
				t.Fatalf("All one by one (oldest first %v): %s, want %s", oldest, msgIDs(got), want)
			}
		}
		q.Channels = []switchboard.Channel{switchboard.ChannelTask}
		p, err = s.All(ctx, q)
		wantIDs(t, "All of channel task", p, err, "feb-task")
		p, err = s.All(ctx, switchboard.MessageQuery{Since: feb.AddDate(0, 0, 2), Until: feb.AddDate(0, 1, 0)})
		wantIDs(t, "All of a month without messages", p, err, "")
		for name, bad := range map[string]switchboard.MessageQuery{
			"no since":      {Until: apr},
			"no until":      {Since: jan},
			"over 366 days": {Since: jan, Until: jan.AddDate(1, 1, 0)},
			"bad limit":     {Since: jan, Until: apr, Limit: switchboard.MaxMessagePage + 1},
			"bad cursor":    {Since: jan, Until: apr, Cursor: "x"},
		} {
			_, err := s.All(ctx, bad)
			wantCode(t, "All with "+name, err, switchboard.EINVALID)
		}
	})

	t.Run("ChainAcrossPairs", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		record(t, s,
			agentMsg("c2", "bob", "carol", "root1", base.Add(2*time.Second)),
			agentMsg("c1", "alice", "bob", "root1", base.Add(time.Second)),
			agentMsg("x", "alice", "bob", "root2", base.Add(1500*time.Millisecond)))
		p, err := s.Chain(ctx, "root1", switchboard.MessageQuery{OldestFirst: true})
		wantIDs(t, "Chain root1", p, err, "c1,c2")
		p, err = s.Chain(ctx, "nope", switchboard.MessageQuery{})
		wantIDs(t, "unknown chain", p, err, "")
	})

	t.Run("PagingRangeAndChannels", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		channels := []switchboard.Channel{switchboard.ChannelAsk, switchboard.ChannelTask, switchboard.ChannelTaskComment}
		var ids []string
		for i := range 9 {
			m := agentMsg(fmt.Sprintf("m%d", i), []string{"alice", "bob"}[i%2], []string{"bob", "alice"}[i%2], "root1",
				base.Add(time.Duration(i)*time.Second))
			m.Channel = channels[i%3]
			record(t, s, m)
			ids = append(ids, m.ID)
		}
		newest := func(ids []string) string {
			r := make([]string, len(ids))
			for i, id := range ids {
				r[len(ids)-1-i] = id
			}
			return strings.Join(r, ",")
		}
		for _, limit := range []int{1, 2, 4, 9, 10} {
			got := allPages(t, func(c string) (switchboard.MessagePage, error) {
				return s.Pair(ctx, "alice", "bob", switchboard.MessageQuery{Limit: limit, Cursor: c})
			})
			if msgIDs(got) != newest(ids) {
				t.Fatalf("limit %d newest first: %s", limit, msgIDs(got))
			}
			got = allPages(t, func(c string) (switchboard.MessagePage, error) {
				return s.Pair(ctx, "alice", "bob", switchboard.MessageQuery{Limit: limit, Cursor: c, OldestFirst: true})
			})
			if msgIDs(got) != strings.Join(ids, ",") {
				t.Fatalf("limit %d oldest first: %s", limit, msgIDs(got))
			}
		}
		p, err := s.Pair(ctx, "alice", "bob", switchboard.MessageQuery{Limit: 3})
		noErr(t, "first page", err)
		if p.NextCursor == "" {
			t.Fatal("a full page with more behind it has no cursor")
		}
		p, err = s.Pair(ctx, "alice", "bob", switchboard.MessageQuery{Limit: 9})
		noErr(t, "exact page", err)
		if p.NextCursor != "" {
			t.Fatal("the page that holds the last message has a cursor")
		}
		// Since inclusive, Until exclusive.
		p, err = s.Pair(ctx, "alice", "bob", switchboard.MessageQuery{
			Since: base.Add(2 * time.Second).In(cet), Until: base.Add(5 * time.Second)})
		wantIDs(t, "range [2s,5s)", p, err, "m4,m3,m2")
		got := allPages(t, func(c string) (switchboard.MessagePage, error) {
			return s.Pair(ctx, "alice", "bob", switchboard.MessageQuery{Limit: 2, Cursor: c,
				Channels: []switchboard.Channel{switchboard.ChannelTask}})
		})
		if msgIDs(got) != "m7,m4,m1" {
			t.Fatalf("channel task: %s", msgIDs(got))
		}
		got = allPages(t, func(c string) (switchboard.MessagePage, error) {
			return s.Agent(ctx, "alice", switchboard.MessageQuery{Limit: 2, Cursor: c, OldestFirst: true,
				Since: base.Add(time.Second), Channels: []switchboard.Channel{switchboard.ChannelAsk, switchboard.ChannelTaskComment}})
		})
		if msgIDs(got) != "m2,m3,m5,m6,m8" {
			t.Fatalf("agent, since 1s, ask+comment: %s", msgIDs(got))
		}
	})

	t.Run("BadQueriesAreInvalid", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		record(t, s, agentMsg("m1", "alice", "bob", "root1", base))
		for _, tc := range []struct {
			name string
			call func() error
		}{
			{"empty agent in pair", func() error { _, err := s.Pair(ctx, "", "bob", switchboard.MessageQuery{}); return err }},
			{"empty agent", func() error { _, err := s.Agent(ctx, "", switchboard.MessageQuery{}); return err }},
			{"empty root", func() error { _, err := s.Chain(ctx, "", switchboard.MessageQuery{}); return err }},
			{"limit too big", func() error {
				_, err := s.Pair(ctx, "alice", "bob", switchboard.MessageQuery{Limit: switchboard.MaxMessagePage + 1})
				return err
			}},
			{"negative limit", func() error { _, err := s.Agent(ctx, "alice", switchboard.MessageQuery{Limit: -1}); return err }},
			{"bad channel", func() error {
				_, err := s.Agent(ctx, "alice", switchboard.MessageQuery{Channels: []switchboard.Channel{"chat"}})
				return err
			}},
			{"since not before until", func() error {
				_, err := s.Agent(ctx, "alice", switchboard.MessageQuery{Since: base, Until: base})
				return err
			}},
			{"forged cursor", func() error {
				_, err := s.Agent(ctx, "alice", switchboard.MessageQuery{Cursor: "bm90LWEtY3Vyc29y"})
				return err
			}},
			{"garbage cursor", func() error { _, err := s.Chain(ctx, "root1", switchboard.MessageQuery{Cursor: "!!"}); return err }},
			{"stop words only", func() error {
				_, err := s.Search(ctx, switchboard.MessageSearch{Text: "the and a"})
				return err
			}},
			{"German stop words only", func() error {
				_, err := s.Search(ctx, switchboard.MessageSearch{Text: "und die"})
				return err
			}},
			{"peer without agent", func() error {
				_, err := s.Search(ctx, switchboard.MessageSearch{Text: "message", Peer: "bob"})
				return err
			}},
		} {
			wantCode(t, tc.name, tc.call(), switchboard.EINVALID)
		}
	})

	t.Run("SearchMatchesAllWordsCaseInsensitively", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		mk := func(id, from, to, content string, sec int) switchboard.AgentMessage {
			m := agentMsg(id, from, to, "root1", base.Add(time.Duration(sec)*time.Second))
			m.Content = content
			return m
		}
		record(t, s,
			mk("m1", "alice", "bob", "Is the Q3 invoice in Nextcloud?", 1),
			mk("m2", "bob", "alice", "Yes: the invoice for Q3 is at shared:finance/q3.pdf", 2),
			mk("m3", "alice", "carol", "Please check the invoices of Q4", 3),
			mk("m4", "carol", "dave", "Q3 invoice sent to the customer.", 4),
			mk("m5", "dave", "erin", "Rechnung für Q3 liegt bereit", 5))
		search := func(ms switchboard.MessageSearch) string {
			t.Helper()
			p, err := s.Search(ctx, ms)
			noErr(t, "search "+ms.Text, err)
			return msgIDs(p.Messages)
		}
		for _, tc := range []struct {
			name string
			q    switchboard.MessageSearch
			want string
		}{
			{"two words, any case", switchboard.MessageSearch{Text: "INVOICE q3"}, "m4,m2,m1"},
			{"whole words only", switchboard.MessageSearch{Text: "invoice"}, "m4,m2,m1"},
			{"plural is another word", switchboard.MessageSearch{Text: "invoices"}, "m3"},
			{"punctuation splits", switchboard.MessageSearch{Text: "finance/q3.pdf"}, "m2"},
			{"non-ASCII", switchboard.MessageSearch{Text: "rechnung FÜR"}, "m5"},
			{"stop words ignored", switchboard.MessageSearch{Text: "the invoice of q3"}, "m4,m2,m1"},
			{"agent scope", switchboard.MessageSearch{Text: "invoice", Agent: "carol"}, "m4"},
			{"pair scope", switchboard.MessageSearch{Text: "q3", Agent: "bob", Peer: "alice"}, "m2,m1"},
			{"time range", switchboard.MessageSearch{Text: "q3", MessageQuery: switchboard.MessageQuery{
				Since: base.Add(2 * time.Second), Until: base.Add(5 * time.Second)}}, "m4,m2"},
			{"oldest first", switchboard.MessageSearch{Text: "q3 invoice", MessageQuery: switchboard.MessageQuery{OldestFirst: true}}, "m1,m2,m4"},
			{"channel filter", switchboard.MessageSearch{Text: "q3", MessageQuery: switchboard.MessageQuery{
				Channels: []switchboard.Channel{switchboard.ChannelTask}}}, ""},
			{"no match", switchboard.MessageSearch{Text: "invoice q4"}, ""},
			{"unknown word", switchboard.MessageSearch{Text: "zebra"}, ""},
		} {
			if got := search(tc.q); got != tc.want {
				t.Errorf("%s: got [%s], want [%s]", tc.name, got, tc.want)
			}
		}
		got := allPages(t, func(c string) (switchboard.MessagePage, error) {
			return s.Search(ctx, switchboard.MessageSearch{Text: "q3", MessageQuery: switchboard.MessageQuery{Limit: 2, Cursor: c}})
		})
		if msgIDs(got) != "m5,m4,m2,m1" {
			t.Fatalf("search paged by 2: %s", msgIDs(got))
		}
	})

	// A message indexes at most switchboard.MaxIndexedTerms words, its
	// longest: a search finds those in any store, and not the shorter ones
	// of a message that has more.
	t.Run("SearchFindsTheLongestWordsOfALongMessage", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		var words []string
		for i := range switchboard.MaxIndexedTerms {
			words = append(words, fmt.Sprintf("indexed%03d", i))
		}
		m := agentMsg("m1", "alice", "bob", "root1", base)
		m.Content = "short " + strings.Join(words, " ") + " tail"
		record(t, s, m)
		for _, tc := range []struct{ text, want string }{
			{"indexed000", "m1"},
			{"indexed039 indexed007", "m1"},
			{"short", ""},
			{"tail", ""},
		} {
			p, err := s.Search(ctx, switchboard.MessageSearch{Text: tc.text})
			noErr(t, "search "+tc.text, err)
			if got := msgIDs(p.Messages); got != tc.want {
				t.Errorf("search %q: got [%s], want [%s]", tc.text, got, tc.want)
			}
		}
	})

	// Stores may keep long content apart from what their listings read
	// first; every view still answers every message whole.
	t.Run("EveryViewAnswersWholeContentOfAnyLength", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		var want []string
		for i, n := range []int{0, 1, 511, 512, 513, 900, 4 << 10, 40 << 10} {
			m := agentMsg(fmt.Sprintf("m%d", i), "alice", "bob", "root1", base.Add(time.Duration(i)*time.Minute))
			m.Content = strings.Repeat("y", n)
			if n >= 7 {
				m.Content = "needle " + m.Content[7:]
			}
			record(t, s, m)
			want = append([]string{m.Content}, want...)
		}
		all := switchboard.MessageQuery{Since: base, Until: base.Add(time.Hour)}
		views := []struct {
			name string
			list func() (switchboard.MessagePage, error)
		}{
			{"Pair", func() (switchboard.MessagePage, error) {
				return s.Pair(ctx, "alice", "bob", switchboard.MessageQuery{})
			}},
			{"Agent", func() (switchboard.MessagePage, error) { return s.Agent(ctx, "bob", switchboard.MessageQuery{}) }},
			{"Chain", func() (switchboard.MessagePage, error) { return s.Chain(ctx, "root1", switchboard.MessageQuery{}) }},
			{"All", func() (switchboard.MessagePage, error) { return s.All(ctx, all) }},
		}
		for _, v := range views {
			p, err := v.list()
			noErr(t, v.name, err)
			if len(p.Messages) != len(want) {
				t.Fatalf("%s: %d messages, want %d", v.name, len(p.Messages), len(want))
			}
			for i, m := range p.Messages {
				if m.Content != want[i] {
					t.Errorf("%s: message %s has %d bytes of content, want %d", v.name, m.ID, len(m.Content), len(want[i]))
				}
			}
		}
		p, err := s.Search(ctx, switchboard.MessageSearch{Text: "needle"})
		noErr(t, "Search", err)
		if len(p.Messages) != len(want)-2 { // all but the empty one and "y"
			t.Fatalf("Search: %d messages, want %d", len(p.Messages), len(want)-2)
		}
		for i, m := range p.Messages {
			if m.Content != want[i] {
				t.Errorf("Search: message %s has %d bytes of content, want %d", m.ID, len(m.Content), len(want[i]))
			}
		}
	})

	t.Run("LongContentRoundTrips", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		// 400 KB: more than one DynamoDB item may hold.
		long := strings.Repeat("Lorem ipsum dolor sit amet, ", 400<<10/28) + "needle"
		m := agentMsg("big", "alice", "bob", "root1", base)
		m.Content = long
		record(t, s, m)
		p, err := s.Pair(ctx, "alice", "bob", switchboard.MessageQuery{})
		noErr(t, "Pair", err)
		if len(p.Messages) != 1 || p.Messages[0].Content != long {
			t.Fatalf("Pair: %d messages, content intact %v", len(p.Messages), len(p.Messages) == 1 && p.Messages[0].Content == long)
		}
		p, err = s.Search(ctx, switchboard.MessageSearch{Text: "needle lorem"})
		noErr(t, "Search", err)
		if len(p.Messages) != 1 || p.Messages[0].Content != long {
			t.Fatalf("Search: %d messages", len(p.Messages))
		}
	})
}

// ReceiptsAndLeases is the store a RecordAll writes receipts to and gives
// leases back in.
type ReceiptsAndLeases interface {
	switchboard.ReceiptStore
	switchboard.Leases
}

// RunRecordAll checks AgentMessageLog.RecordAll: messages and a receipt
// written together, a repeat that is success and doubles nothing, a lease
// given back with them, and a call with one bad item that writes none.
// newStores returns an empty message store and the store its RecordAll
// writes receipts and leases to.
func RunRecordAll(t *testing.T, newStores func(t *testing.T) (switchboard.AgentMessageStore, ReceiptsAndLeases)) {
	question := agentMsg("q1", "alice", "bob", "root1", base)
	question.Content = "Which invoice is overdue?"
	answer := agentMsg("a1", "bob", "alice", "root1", base.Add(time.Second).In(cet))
	answer.Direction, answer.RunID, answer.ParentRunID = switchboard.DirectionResponse, "run-bob", "run-q1"
	answer.Content = "The overdue invoice is Q3's"
	rec := receipt("run-bob", "bob", "root1", base, 0.5, 10, 20)
	rec.Run.ParentRunID = "run-q1"

	t.Run("WritesMessagesAndReceiptRepeatably", func(t *testing.T) {
		s, receipts := newStores(t)
		ctx := t.Context()
		for i := range 2 { // the second call is a retried Task: success, nothing doubled
			noErr(t, fmt.Sprintf("RecordAll, call %d", i+1), s.RecordAll(ctx, switchboard.MessageBatch{Messages: []switchboard.AgentMessage{question, answer}, Receipt: &rec}))
		}
		p, err := s.Chain(ctx, "root1", switchboard.MessageQuery{OldestFirst: true})
		wantIDs(t, "Chain", p, err, "q1,a1")
		if !reflect.DeepEqual(p.Messages[1], stored(answer)) {
			t.Errorf("answer read back as %+v, want %+v", p.Messages[1], stored(answer))
		}
		p, err = s.Search(ctx, switchboard.MessageSearch{Text: "overdue invoice", MessageQuery: switchboard.MessageQuery{OldestFirst: true}})
		wantIDs(t, "Search finds both through their search rows", p, err, "q1,a1")
		c, err := receipts.ChainCost(ctx, "root1")
		noErr(t, "ChainCost", err)
		if c.Runs != 1 || c.CostUSD != 0.5 || c.Receipts[0].Run.ParentRunID != "run-q1" {
			t.Fatalf("ChainCost = %+v, want bob's one receipt", c)
		}
		// RecordAll wrote the same items Record would: recording one again
		// finds it.
		wantCode(t, "Record of a message RecordAll wrote", s.Record(ctx, question), switchboard.ECONFLICT)
		wantCode(t, "Put of the receipt RecordAll wrote", receipts.Put(ctx, rec), switchboard.ECONFLICT)
	})

	t.Run("GivesTheLeaseBack", func(t *testing.T) {
		s, store := newStores(t)
		ctx := t.Context()
		until := time.Now().Add(time.Minute)
		ok, err := store.Acquire(ctx, "agent#bob", "holder-1", until)
		if err != nil || !ok {
			t.Fatalf("Acquire = %v, %v; want the free lease", ok, err)
		}
		noErr(t, "RecordAll", s.RecordAll(ctx, switchboard.MessageBatch{
			Messages: []switchboard.AgentMessage{question, answer}, Receipt: &rec, Release: "agent#bob"}))
		ok, err = store.Acquire(ctx, "agent#bob", "holder-2", until)
		if err != nil || !ok {
			t.Fatalf("Acquire after RecordAll = %v, %v; want the lease given back", ok, err)
		}
		// A lease nobody holds is given back too: a repeated call succeeds.
		noErr(t, "RecordAll, repeated", s.RecordAll(ctx, switchboard.MessageBatch{Release: "agent#alice"}))
		p, err := s.Chain(ctx, "root1", switchboard.MessageQuery{OldestFirst: true})
		wantIDs(t, "Chain", p, err, "q1,a1")
	})

	t.Run("WithoutReceipt", func(t *testing.T) {
		s, _ := newStores(t)
		noErr(t, "RecordAll", s.RecordAll(t.Context(), switchboard.MessageBatch{Messages: []switchboard.AgentMessage{question}}))
		p, err := s.Pair(t.Context(), "alice", "bob", switchboard.MessageQuery{})
		wantIDs(t, "Pair", p, err, "q1")
	})

	t.Run("OneInvalidItemWritesNothing", func(t *testing.T) {
		s, receipts := newStores(t)
		ctx := t.Context()
		bad := answer
		bad.ID = ""
		wantCode(t, "a message without id", s.RecordAll(ctx, switchboard.MessageBatch{Messages: []switchboard.AgentMessage{question, bad}, Receipt: &rec}), switchboard.EINVALID)
		noRun := rec
		noRun.Run.RunID = ""
		wantCode(t, "a receipt without run id", s.RecordAll(ctx, switchboard.MessageBatch{Messages: []switchboard.AgentMessage{question}, Receipt: &noRun}), switchboard.EINVALID)
		wantCode(t, "a bad lease key", s.RecordAll(ctx, switchboard.MessageBatch{Messages: []switchboard.AgentMessage{question}, Release: strings.Repeat("k", 2000)}), switchboard.EINVALID)
		p, err := s.Agent(ctx, "alice", switchboard.MessageQuery{})
		wantIDs(t, "no message stored", p, err, "")
		c, err := receipts.ChainCost(ctx, "root1")
		noErr(t, "ChainCost", err)
		if c.Runs != 0 {
			t.Fatalf("ChainCost = %+v, want no receipt", c)
		}
	})
}
