package dynamo_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo"
	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

// TestSearchAgreesWithTheMemoryStore drives the search on random corpora
// and queries — one to three words of skewed frequency, a scope, channels,
// a time range, either order, small pages — with tiny first pages and
// budgets, so that words span many pages, candidates are looked up, words
// are read on and calls end early with a cursor. Following the cursors to
// the end must give exactly what the in-memory store gives, which filters
// every message.
func TestSearchAgreesWithTheMemoryStore(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprint("corpus", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 7))
			dynamo.SetSearchFirstPage(t, int32(2+r.IntN(4)))
			dynamo.SetSearchBudget(t, []float64{0.05, 0.2, 1}[seed])
			msgs, mem := modelStores(t, r)
			for q := range 40 {
				var words []string
				for range 1 + r.IntN(3) {
					words = append(words, modelVocab[r.IntN(len(modelVocab))])
				}
				sq := switchboard.MessageSearch{Text: strings.Join(words, " ")}
				switch r.IntN(4) {
				case 1:
					sq.Agent = modelAgents[r.IntN(len(modelAgents))]
				case 2:
					sq.Agent, sq.Peer = modelAgents[r.IntN(len(modelAgents))], modelAgents[r.IntN(len(modelAgents))]
				}
				sq.MessageQuery = modelQuery(r)
				want := searchAll(t, mem, sq)
				got := searchAll(t, msgs, sq)
				if !slices.Equal(got, want) {
					t.Errorf("query %d %+v:\n got %v\nwant %v", q, sq, got, want)
				}
			}
		})
	}
}

var (
	// Word i of modelVocab is in about 1/(i+1) of modelStores' messages.
	modelVocab    = []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"}
	modelAgents   = []string{"ann", "ben", "cat", "dan"}
	modelChannels = []switchboard.Channel{switchboard.ChannelAsk, switchboard.ChannelTask, switchboard.ChannelTaskComment, switchboard.ChannelTaskResult}
	modelStart    = time.Date(2026, 1, 31, 23, 0, 0, 0, time.UTC) // 160 messages reach into February
)

// modelStores are the dynamo store and the in-memory store, both holding
// the same 160 random messages: words of modelVocab, random pairs of
// modelAgents, channels and chains, one to three minutes apart or at the
// same time, across a month's end.
func modelStores(t *testing.T, r *rand.Rand) (*dynamo.AgentMessages, *memstore.AgentMessages) {
	t.Helper()
	_, msgs := newMessages(t)
	mem := &memstore.AgentMessages{}
	at := modelStart
	for i := range 160 {
		var words []string
		for j, w := range modelVocab {
			if r.IntN(j+1) == 0 {
				words = append(words, w)
			}
		}
		r.Shuffle(len(words), func(x, y int) { words[x], words[y] = words[y], words[x] })
		at = at.Add(time.Duration(r.IntN(3)) * time.Minute)
		m := switchboard.AgentMessage{
			ID: fmt.Sprintf("m%03d", i), From: modelAgents[r.IntN(len(modelAgents))], To: modelAgents[r.IntN(len(modelAgents))],
			Channel: modelChannels[r.IntN(len(modelChannels))], Direction: switchboard.DirectionRequest,
			Content: strings.Join(words, " ") + " x" + fmt.Sprint(i), RunID: "r", RootRunID: fmt.Sprint("root", r.IntN(3)),
			Status: switchboard.MessageDelivered, OccurredAt: at,
		}
		if err := msgs.Record(t.Context(), m); err != nil {
			t.Fatal(err)
		}
		if err := mem.Record(t.Context(), m); err != nil {
			t.Fatal(err)
		}
	}
	return msgs, mem
}

// modelQuery is a random query: sometimes channels, sometimes a time range
// within modelStores' messages, either order, a small page.
func modelQuery(r *rand.Rand) switchboard.MessageQuery {
	var q switchboard.MessageQuery
	if r.IntN(3) == 0 {
		q.Channels = []switchboard.Channel{modelChannels[r.IntN(len(modelChannels))], modelChannels[r.IntN(len(modelChannels))]}
	}
	if r.IntN(3) == 0 {
		q.Since = modelStart.Add(time.Duration(r.IntN(200)) * time.Minute)
		q.Until = q.Since.Add(time.Duration(1+r.IntN(200)) * time.Minute)
	}
	q.OldestFirst = r.IntN(2) == 0
	q.Limit = 1 + r.IntN(7)
	return q
}

// TestListingsAgreeWithTheMemoryStore: the pair, agent, chain and
// all-pairs views of random queries, followed to the end, give exactly
// what the in-memory store gives.
func TestListingsAgreeWithTheMemoryStore(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 7))
	msgs, mem := modelStores(t, r)
	views := []struct {
		name string
		list func(switchboard.AgentMessageReader, switchboard.MessageQuery) (switchboard.MessagePage, error)
	}{
		{"pair", func(s switchboard.AgentMessageReader, q switchboard.MessageQuery) (switchboard.MessagePage, error) {
			return s.Pair(t.Context(), "ann", "ben", q)
		}},
		{"self", func(s switchboard.AgentMessageReader, q switchboard.MessageQuery) (switchboard.MessagePage, error) {
			return s.Pair(t.Context(), "cat", "cat", q)
		}},
		{"agent", func(s switchboard.AgentMessageReader, q switchboard.MessageQuery) (switchboard.MessagePage, error) {
			return s.Agent(t.Context(), "dan", q)
		}},
		{"chain", func(s switchboard.AgentMessageReader, q switchboard.MessageQuery) (switchboard.MessagePage, error) {
			return s.Chain(t.Context(), "root1", q)
		}},
		{"all", func(s switchboard.AgentMessageReader, q switchboard.MessageQuery) (switchboard.MessagePage, error) {
			if q.Since.IsZero() { // the view needs a range: the corpus' whole time
				q.Since, q.Until = modelStart, modelStart.Add(24*time.Hour)
			}
			return s.All(t.Context(), q)
		}},
	}
	for i := range 60 {
		v, q := views[i%len(views)], modelQuery(r)
		want := listAll(t, mem, q, v.list)
		got := listAll(t, msgs, q, v.list)
		if !slices.Equal(got, want) {
			t.Errorf("%s view, query %+v:\n got %v\nwant %v", v.name, q, got, want)
		}
	}
}

// listAll follows a listing's cursors to the end and answers the ids.
func listAll(t *testing.T, s switchboard.AgentMessageReader, q switchboard.MessageQuery,
	list func(switchboard.AgentMessageReader, switchboard.MessageQuery) (switchboard.MessagePage, error)) []string {
	t.Helper()
	ids := []string{}
	for range 1000 {
		p, err := list(s, q)
		if err != nil {
			t.Fatalf("list %+v: %v", q, err)
		}
		for _, m := range p.Messages {
			ids = append(ids, m.ID)
		}
		if len(p.Messages) > q.PageSize() {
			t.Fatalf("list %+v: a page of %d, more than %d", q, len(p.Messages), q.PageSize())
		}
		if p.NextCursor == "" {
			return ids
		}
		q.Cursor = p.NextCursor
	}
	t.Fatalf("list %+v: 1,000 pages and still a cursor", q)
	return nil
}

// searchAll follows a search's cursors to the end and answers the ids.
func searchAll(t *testing.T, s switchboard.AgentMessageReader, sq switchboard.MessageSearch) []string {
	t.Helper()
	return listAll(t, s, sq.MessageQuery, func(s switchboard.AgentMessageReader, q switchboard.MessageQuery) (switchboard.MessagePage, error) {
		sq.MessageQuery = q
		return s.Search(t.Context(), sq)
	})
}

// TestTaskStoreAgreesWithTheMemoryStore applies the same random operations
// — creations, comments, blocks and completions (many refused), watchdog
// claims and releases — to both task stores, and after each compares what
// they answered, and every listing by party, role and status.
func TestTaskStoreAgreesWithTheMemoryStore(t *testing.T) {
	ctx := t.Context()
	r := rand.New(rand.NewPCG(5, 9))
	stores := []switchboard.TaskStore{newStore(t).Tasks(), &memstore.Tasks{}}
	parties := []string{"ann", "ben", switchboard.HumanParty}
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	var ids []string
	outcome := func(task switchboard.Task, err error) string {
		if err != nil {
			return string(switchboard.ErrorCode(err))
		}
		return fmt.Sprintf("%s %s %d %q %q", task.ID, task.Status, len(task.Comments), task.Result, task.Blocker)
	}
	for step := range 150 {
		at = at.Add(time.Duration(r.IntN(3)) * time.Minute)
		var op string
		var do func(switchboard.TaskStore) string
		switch k := r.IntN(6); {
		case k == 0 || len(ids) == 0:
			id := fmt.Sprintf("t%03d", step)
			ids = append(ids, id)
			task := switchboard.Task{ID: id, Creator: parties[r.IntN(len(parties))], Assignee: parties[r.IntN(2)],
				Title: id, Status: switchboard.TaskOpen, CreatedAt: at, UpdatedAt: at}
			op = "create " + id
			do = func(s switchboard.TaskStore) string { return outcome(task, s.Create(ctx, task)) }
		case k == 1:
			id := ids[r.IntN(len(ids))]
			op = "comment " + id
			do = func(s switchboard.TaskStore) string {
				return outcome(s.Comment(ctx, id, switchboard.TaskComment{By: "ann", Text: "c", At: at}))
			}
		case k == 2 || k == 3:
			id, to := ids[r.IntN(len(ids))], []switchboard.TaskStatus{switchboard.TaskDone, switchboard.TaskBlocked}[r.IntN(2)]
			op = fmt.Sprintf("finish %s %s", id, to)
			do = func(s switchboard.TaskStore) string {
				return outcome(s.Finish(ctx, id, to, "why", switchboard.RunContext{RunID: "r"}, at))
			}
		case k == 4:
			id := ids[r.IntN(len(ids))]
			op = "claim " + id
			do = func(s switchboard.TaskStore) string {
				ok, err := s.ClaimWatchdog(ctx, id, at)
				return fmt.Sprint(ok, switchboard.ErrorCode(err))
			}
		default:
			id := ids[r.IntN(len(ids))]
			op = "get " + id
			do = func(s switchboard.TaskStore) string { return outcome(s.Get(ctx, id)) }
		}
		got, want := do(stores[0]), do(stores[1])
		if got != want {
			t.Fatalf("step %d, %s: %s, the memory store %s", step, op, got, want)
		}
		for _, party := range parties {
			for _, role := range []switchboard.TaskRole{switchboard.TaskAssignedTo, switchboard.TaskCreatedBy} {
				for _, status := range []switchboard.TaskStatus{"", switchboard.TaskOpen, switchboard.TaskBlocked, switchboard.TaskDone} {
					q := switchboard.TaskQuery{Party: party, Role: role, Status: status, Limit: 1 + r.IntN(6)}
					var lists [2]string
					for i, s := range stores {
						ts, err := s.List(ctx, q)
						var b strings.Builder
						for _, task := range ts {
							b.WriteString(task.ID + " ")
						}
						lists[i] = b.String() + string(switchboard.ErrorCode(err))
					}
					if lists[0] != lists[1] {
						t.Fatalf("step %d, after %s, list %+v: [%s], the memory store [%s]", step, op, q, lists[0], lists[1])
					}
				}
			}
		}
		var open [2]string
		for i, s := range stores {
			ts, err := s.OpenSince(ctx, at, 100)
			for _, task := range ts {
				open[i] += task.ID + " "
			}
			open[i] += string(switchboard.ErrorCode(err))
		}
		if open[0] != open[1] {
			t.Fatalf("step %d, after %s, open since: [%s], the memory store [%s]", step, op, open[0], open[1])
		}
	}
}
