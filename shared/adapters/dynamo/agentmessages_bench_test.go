package dynamo_test

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo"
	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

// EnvBenchMessages sets how many messages BenchmarkAgentMessages loads;
// make test runs every benchmark once, so the default stays small. The
// 100,000-message measurement:
//
//	SWITCHBOARD_BENCH_MESSAGES=100000 go test -run '^$' -bench AgentMessages -benchtime 20x -timeout 2h ./shared/adapters/dynamo/
const EnvBenchMessages = "SWITCHBOARD_BENCH_MESSAGES"

// BenchmarkAgentMessages loads the corpus through Record (8 writers), then
// measures the pair view, the agent view, the all-pairs view, the chain
// view and searches.
func BenchmarkAgentMessages(b *testing.B) {
	n := 2000
	if v := os.Getenv(EnvBenchMessages); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 100 {
			b.Fatalf("%s=%q: want a number >= 100", EnvBenchMessages, v)
		}
	}
	s, msgs := newMessages(b)
	corpus := dynamo.BenchCorpus(n, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	began := time.Now()
	var wg sync.WaitGroup
	work := make(chan switchboard.AgentMessage)
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for m := range work {
				if err := msgs.Record(b.Context(), m); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		}()
	}
	for _, m := range corpus {
		work <- m
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		b.Fatalf("load: %v", err)
	default:
	}
	st := s.Stats()
	load := st.Total
	var rows, formerRows int
	for _, m := range corpus {
		rows += len(switchboard.IndexTerms(m.Content))
		formerRows += len(dynamo.FormerIndexTerms(m.Content))
	}
	// On AWS every search row and index entry of this corpus is one write
	// unit (each under 1 KB), as is the message itself.
	b.Logf("search rows per message: %.2f (%.2f with the former words); items per message %.2f (%.2f), AWS WCU per message %.2f (%.2f: the message, 4 index entries, the search rows)",
		float64(rows)/float64(n), float64(formerRows)/float64(n),
		1+float64(rows)/float64(n), 1+float64(formerRows)/float64(n),
		5+float64(rows)/float64(n), 5+float64(formerRows)/float64(n))
	b.Logf("loaded %d messages in %v (%.0f msg/s): %d calls (%d PutItem, %d BatchWriteItem), %.0f WCU reported by dynalite (%.2f per message)",
		n, time.Since(began).Round(time.Millisecond), float64(n)/time.Since(began).Seconds(),
		load.Calls, st.Ops["agentMessages.record"].Calls, st.Ops["agentMessages.index"].Calls,
		load.WriteUnits, load.WriteUnits/float64(n))

	measure := func(name, op string, f func() (int, error), min int) {
		b.Run(name, func(b *testing.B) {
			before := s.Stats().Ops[op]
			k := 0
			for b.Loop() {
				got, err := f()
				if err != nil || got < min {
					b.Fatalf("%s: %d messages, %v; want at least %d", name, got, err, min)
				}
				k++
			}
			reportCapacity(b, k, before, s.Stats().Ops[op])
		})
	}
	ctx := b.Context()
	count := func(p switchboard.MessagePage, err error) (int, error) { return len(p.Messages), err }
	measure("pair/newest200", "agentMessages.pair", func() (int, error) {
		return count(msgs.Pair(ctx, "alice", "bob", switchboard.MessageQuery{}))
	}, 200)
	measure("agent/newest200", "agentMessages.agent", func() (int, error) {
		return count(msgs.Agent(ctx, "carol", switchboard.MessageQuery{}))
	}, 10)
	// Every pair of the corpus' time span (it starts 2026-01-01, one
	// message a second): the byMonth view the analysis tool reads.
	all := switchboard.MessageQuery{Since: corpus[0].OccurredAt, Until: corpus[len(corpus)-1].OccurredAt.Add(time.Second)}
	measure("all/newest200", "agentMessages.all", func() (int, error) {
		return count(msgs.All(ctx, all))
	}, 200)
	measure("all/newest1000", "agentMessages.all", func() (int, error) {
		q := all
		q.Limit = switchboard.MaxMessagePage
		return count(msgs.All(ctx, q))
	}, 1000)
	measure("chain", "agentMessages.chain", func() (int, error) {
		return count(msgs.Chain(ctx, "root-000100", switchboard.MessageQuery{OldestFirst: true}))
	}, 4)
	common := commonWords(corpus, 2)
	for _, tc := range []struct {
		name, text, agent string
		min               int
	}{
		{"search/rare", "zebrafish", "", 5},
		{"search/1pct", "invoice", "", 1},
		{"search/1pct+2pct", "invoice quarterly", "", 0},
		{"search/common+rare", common[0] + " zebrafish", "", 1},
		{"search/common", common[0], "", 1},
		{"search/two-common", common[0] + " " + common[1], "", 1},
		{"search/two-common-page10", common[0] + " " + common[1], "", 1},
		{"search/1pct-agent", "invoice", "carol", 0},
	} {
		measure(tc.name, "agentMessages.search", func() (int, error) {
			s := switchboard.MessageSearch{Text: tc.text, Agent: tc.agent}
			if strings.HasSuffix(tc.name, "-page10") {
				s.Limit = 10
			}
			return count(msgs.Search(ctx, s))
		}, tc.min)
	}
}

// commonWords are the n words in the most messages of the corpus, most
// common first.
func commonWords(corpus []switchboard.AgentMessage, n int) []string {
	seen := map[string]int{}
	var words []string
	for _, m := range corpus {
		for _, w := range switchboard.SearchTerms(m.Content, 0) {
			if seen[w]++; seen[w] == 1 {
				words = append(words, w)
			}
		}
	}
	slices.SortStableFunc(words, func(a, b string) int { return seen[b] - seen[a] })
	return words[:n]
}
