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
			_, msgs := newMessages(t)
			mem := &memstore.AgentMessages{}
			// Word i is in about 1/(i+1) of the messages.
			vocab := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"}
			agents := []string{"ann", "ben", "cat", "dan"}
			channels := []switchboard.Channel{switchboard.ChannelAsk, switchboard.ChannelTask, switchboard.ChannelTaskComment, switchboard.ChannelTaskResult}
			at := time.Date(2026, 1, 30, 23, 0, 0, 0, time.UTC)
			for i := range 160 {
				var words []string
				for j, w := range vocab {
					if r.IntN(j+1) == 0 {
						words = append(words, w)
					}
				}
				r.Shuffle(len(words), func(x, y int) { words[x], words[y] = words[y], words[x] })
				from, to := agents[r.IntN(len(agents))], agents[r.IntN(len(agents))]
				at = at.Add(time.Duration(r.IntN(3)) * time.Minute) // equal times too; across a month's end
				m := switchboard.AgentMessage{
					ID: fmt.Sprintf("m%03d", i), From: from, To: to, Channel: channels[r.IntN(len(channels))],
					Direction: switchboard.DirectionRequest, Content: strings.Join(words, " ") + " x" + fmt.Sprint(i),
					RunID: "r", RootRunID: "r", Status: switchboard.MessageDelivered, OccurredAt: at,
				}
				if err := msgs.Record(t.Context(), m); err != nil {
					t.Fatal(err)
				}
				if err := mem.Record(t.Context(), m); err != nil {
					t.Fatal(err)
				}
			}
			start := time.Date(2026, 1, 30, 23, 0, 0, 0, time.UTC)
			for q := range 40 {
				var words []string
				for range 1 + r.IntN(3) {
					words = append(words, vocab[r.IntN(len(vocab))])
				}
				sq := switchboard.MessageSearch{Text: strings.Join(words, " ")}
				switch r.IntN(4) {
				case 1:
					sq.Agent = agents[r.IntN(len(agents))]
				case 2:
					sq.Agent, sq.Peer = agents[r.IntN(len(agents))], agents[r.IntN(len(agents))]
				}
				if r.IntN(3) == 0 {
					sq.Channels = []switchboard.Channel{channels[r.IntN(len(channels))], channels[r.IntN(len(channels))]}
				}
				if r.IntN(3) == 0 {
					sq.Since = start.Add(time.Duration(r.IntN(200)) * time.Minute)
					sq.Until = sq.Since.Add(time.Duration(1+r.IntN(200)) * time.Minute)
				}
				sq.OldestFirst = r.IntN(2) == 0
				sq.Limit = 1 + r.IntN(7)
				want := searchAll(t, mem, sq)
				got := searchAll(t, msgs, sq)
				if !slices.Equal(got, want) {
					t.Errorf("query %d %+v:\n got %v\nwant %v", q, sq, got, want)
				}
			}
		})
	}
}

// searchAll follows a search's cursors to the end and answers the ids.
func searchAll(t *testing.T, s switchboard.AgentMessageStore, sq switchboard.MessageSearch) []string {
	t.Helper()
	ids := []string{}
	for range 1000 {
		p, err := s.Search(t.Context(), sq)
		if err != nil {
			t.Fatalf("search %+v: %v", sq, err)
		}
		for _, m := range p.Messages {
			ids = append(ids, m.ID)
		}
		if len(p.Messages) > sq.PageSize() {
			t.Fatalf("search %+v: a page of %d, more than %d", sq, len(p.Messages), sq.PageSize())
		}
		if p.NextCursor == "" {
			return ids
		}
		sq.Cursor = p.NextCursor
	}
	t.Fatalf("search %+v: 1,000 pages and still a cursor", sq)
	return nil
}
