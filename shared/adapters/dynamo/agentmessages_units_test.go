package dynamo

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/ddb"
	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

// itemBytes is an item's size as DynamoDB bills it: per attribute its
// name's bytes plus its value's (a string's bytes; a number about one byte
// per two digits, plus one), counting only the attributes keep admits.
func itemBytes(av map[string]ddb.AttributeValue, keep func(string) bool) int {
	n := 0
	for name, v := range av {
		if !keep(name) {
			continue
		}
		n += len(name)
		switch v := v.(type) {
		case *ddb.AttributeValueMemberS:
			n += len(v.Value)
		case *ddb.AttributeValueMemberN:
			n += (len(strings.TrimLeft(v.Value, "-"))+1)/2 + 1
		default:
			n++
		}
	}
	return n
}

// writeUnits is what one write of size bytes costs: 1 per KB, at least 1.
func writeUnits(bytes int) int { return max(1, int(math.Ceil(float64(bytes)/1024))) }

// messageSizes is the bytes of one message's row, of its entry in each
// index (projected as the catalogue says) and of its search rows, one per
// word of words(m.Content).
func messageSizes(t *testing.T, m switchboard.AgentMessage, words func(string) []string) (row int, entries, search []int) {
	t.Helper()
	it, tokens := toItems(m, 30*24*time.Hour)
	av, err := ddb.MarshalMap(it)
	if err != nil {
		t.Fatal(err)
	}
	row = itemBytes(av, func(string) bool { return true })
	table, _ := deploy.TableByID("agentmessages")
	for _, ix := range table.Indexes {
		attrs := ix.NonKeyAttributes(table)
		entries = append(entries, itemBytes(av, func(name string) bool {
			return attrs == nil || slices.Contains(attrs, name) ||
				name == table.PK.Name || name == table.SK.Name || name == ix.PK.Name || name == ix.SK.Name
		}))
	}
	tok := tokens[0]
	for _, w := range words(m.Content) {
		tok.PK = tokenPrefix + w
		tav, err := ddb.MarshalMap(tok)
		if err != nil {
			t.Fatal(err)
		}
		search = append(search, itemBytes(tav, func(string) bool { return true }))
	}
	return row, entries, search
}

// messageWrites is the write units one message costs on AWS: its row, one
// entry per index, and one search row per word of words(m.Content).
func messageWrites(t *testing.T, m switchboard.AgentMessage, words func(string) []string) (row, index, search int) {
	t.Helper()
	r, entries, rows := messageSizes(t, m, words)
	for _, n := range entries {
		index += writeUnits(n)
	}
	for _, n := range rows {
		search += writeUnits(n)
	}
	return writeUnits(r), index, search
}

// textOf is size bytes of text (or a little more) of distinct different
// words.
func textOf(distinct, size int) string {
	var b strings.Builder
	for i := 0; b.Len() < size || i < distinct; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "word%03dx", i%distinct)
	}
	return b.String()
}

// proseOf is the pieces of size bytes of a document of this repository,
// as kept in testdata/prose (see its README).
func proseOf(t *testing.T, doc string, size int) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "prose", doc))
	if err != nil {
		t.Fatal(err)
	}
	var pieces []string
	for text := string(b); len(text) >= size; text = text[size:] {
		pieces = append(pieces, strings.ToValidUTF8(text[:size], ""))
	}
	return pieces
}

// TestAgentMessageWriteUnits computes what a message writes on AWS, from
// the item shapes (dynalite reports no index writes), with the words
// messages were indexed by before (FormerIndexTerms) and now (IndexTerms):
// every index entry is one write unit whatever the content's length, and
// no message writes more than before. go test -v prints the table that
// docs/performance.md quotes.
func TestAgentMessageWriteUnits(t *testing.T) {
	at := time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC)
	msg := func(content string) switchboard.AgentMessage {
		return switchboard.AgentMessage{
			ID: "01JQ7Z3X9K2M4N6P8R0T2V4X6Z", From: "hermes", To: "atlas", Channel: switchboard.ChannelAsk,
			Direction: switchboard.DirectionResponse, Content: content,
			RunID: "run-01JQ7Z3X9K2M4N6P8R0T2V4X6Z", ParentRunID: "run-01JQ7Z3X9K2M4N6P8R0T2V4X60",
			RootRunID: "run-01JQ7Z3X9K2M4N6P8R0T2V4X60", Status: switchboard.MessageDelivered, OccurredAt: at,
		}
	}
	for _, tc := range []struct {
		name   string
		pieces []string
	}{
		{"benchmark-like (13 distinct words, 140 B)", []string{textOf(13, 140)}},
		{"short ask (25 distinct words, 200 B)", []string{textOf(25, 200)}},
		{"1 KB of 30 words", []string{textOf(30, 1024)}},
		{"3 KB answer, 120 distinct words", []string{textOf(120, 3<<10)}},
		{"20 KB report, 400 distinct words", []string{textOf(400, 20<<10)}},
		{"300 B of prose (docs/agents.md)", proseOf(t, "agents.md", 300)},
		{"1 KB of prose (docs/design.md)", proseOf(t, "design.md", 1024)},
		{"1 KB of prose (docs/agents.md)", proseOf(t, "agents.md", 1024)},
	} {
		var words0, words1, wcu0, wcu1 int
		for _, text := range tc.pieces {
			m := msg(text)
			r0, i0, s0 := messageWrites(t, m, FormerIndexTerms)
			r1, i1, s1 := messageWrites(t, m, switchboard.IndexTerms)
			if i1 != 4 {
				t.Errorf("%s: the four index entries cost %d write units, want 4", tc.name, i1)
			}
			if r1+i1+s1 > r0+i0+s0 {
				t.Errorf("%s: %d write units, more than the former %d", tc.name, r1+i1+s1, r0+i0+s0)
			}
			words0, words1 = words0+len(FormerIndexTerms(text)), words1+len(switchboard.IndexTerms(text))
			wcu0, wcu1 = wcu0+r0+i0+s0, wcu1+r1+i1+s1
		}
		n := float64(len(tc.pieces))
		t.Logf("| %s | %d | %.1f → %.1f | %.1f → %.1f (%+.0f %%) |", tc.name, len(tc.pieces),
			float64(words0)/n, float64(words1)/n, float64(wcu0)/n, float64(wcu1)/n, 100*float64(wcu1-wcu0)/float64(wcu0))
	}
}

// batchedRowWrites is what the search rows of msgs would cost on AWS if
// they were written in batches of n consecutive messages: one row per word
// and batch, listing its messages (sort key, pair and channel of each, as a
// search needs them), each row billed by its size. It answers the write
// units per message.
func batchedRowWrites(msgs []switchboard.AgentMessage, n int, words func(string) []string) float64 {
	units := 0
	for start := 0; start < len(msgs); start += n {
		batch := msgs[start:min(start+n, len(msgs))]
		rows := map[string]int{} // word → bytes of its row
		for _, m := range batch {
			_, sk := messageKey(m)
			entry := len(sk) + len(switchboard.PairKey(m.From, m.To)) + len(m.Channel) + 3
			for _, w := range words(m.Content) {
				if rows[w] == 0 { // pk, sk (the batch's first message) and the list's name
					rows[w] = len("pk") + len(tokenPrefix+w) + len("sk") + len(sk) + len("refs")
				}
				rows[w] += entry
			}
		}
		for _, b := range rows {
			units += writeUnits(b)
		}
	}
	return float64(units) / float64(len(msgs))
}

// TestBatchedSearchRowsHalveOnlyLargeBatches measures why the search rows
// of a short message are written per message: a row per word and batch of
// messages saves only the rows of words that repeat within the batch, and
// most words of a message are rare ones. Of the corpus of the store
// benchmark and of a stream of 300-byte pieces of this repository's docs
// (prose shares more words from piece to piece than messages of different
// agents do), writes per message reach half only with batches of hundreds
// of messages — half a day to days of the reference team — which a search
// would have to read unindexed. go test -v prints the table that
// docs/performance.md quotes.
func TestBatchedSearchRowsHalveOnlyLargeBatches(t *testing.T) {
	corpus := benchCorpus(20000, time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
	var prose []switchboard.AgentMessage
	for _, doc := range []string{"agents.md", "design.md", "console.md", "documents.md", "tools.md", "config.md", "approvals.md", "telemetry.md"} {
		for _, text := range proseOf(t, doc, 300) {
			m := corpus[len(prose)]
			m.Content = text
			prose = append(prose, m)
		}
	}
	// Beside the search rows a message writes its row and four index
	// entries, one unit each.
	const fixed = 5
	for _, tc := range []struct {
		name string
		msgs []switchboard.AgentMessage
	}{{"benchmark corpus", corpus}, {"300 B pieces of docs/", prose}} {
		// The "today": one row per word as messages were indexed
		// before (FormerIndexTerms).
		former := batchedRowWrites(tc.msgs, 1, FormerIndexTerms)
		base := batchedRowWrites(tc.msgs, 1, switchboard.IndexTerms)
		cells := []string{fmt.Sprintf("%.1f", fixed+former)}
		halvedAt := 0
		for _, n := range []int{1, 10, 30, 100, 300, 1000} {
			if n > len(tc.msgs) {
				break
			}
			w := batchedRowWrites(tc.msgs, n, switchboard.IndexTerms)
			if n > 1 && w > base {
				t.Errorf("%s: batches of %d write %.1f units per message, more than one at a time (%.1f)", tc.name, n, w, base)
			}
			if halvedAt == 0 && fixed+w <= (fixed+former)/2 {
				halvedAt = n
			}
			cells = append(cells, fmt.Sprintf("%.1f", fixed+w))
		}
		if halvedAt != 0 && halvedAt < 100 {
			t.Errorf("%s: batches of %d messages halve the writes; docs/performance.md says it takes 100 or more", tc.name, halvedAt)
		}
		t.Logf("| %s (%d messages) | %s | %d |", tc.name, len(tc.msgs), strings.Join(cells, " | "), halvedAt)
	}
}

// TestSearchRowsWithCopiesWouldMultiplyStorage measures the price of a
// search page read from the search rows instead of item by item: each row
// would carry a copy of its message. go test -v prints the figures that
// docs/performance.md quotes.
func TestSearchRowsWithCopiesWouldMultiplyStorage(t *testing.T) {
	corpus := benchCorpus(2000, time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
	prose := proseOf(t, "agents.md", 300)
	for _, tc := range []struct {
		name  string
		texts []string
	}{{"benchmark corpus", nil}, {"300 B of prose (docs/agents.md)", prose}} {
		var now, with, rows, rowBytes, copyBytes int
		msgs := corpus
		if tc.texts != nil {
			msgs = nil
			for i, text := range tc.texts {
				m := corpus[i]
				m.Content = text
				msgs = append(msgs, m)
			}
		}
		for _, m := range msgs {
			// What the message keeps in the table and its indexes, and
			// with a copy of its row in each of its search rows.
			row, entries, search := messageSizes(t, m, switchboard.IndexTerms)
			kept := row
			for _, n := range entries {
				kept += n
			}
			for _, n := range search {
				kept += n
				rowBytes += n
			}
			now += kept
			with += kept + len(search)*row
			rows += len(search)
			copyBytes += len(search) * row
		}
		n := float64(len(msgs))
		if with < 2*now {
			t.Errorf("%s: copies in the search rows would store %.1f× the bytes; docs/performance.md says 2.5× or more", tc.name, float64(with)/float64(now))
		}
		t.Logf("| %s | %.1f KB → %.1f KB (%.1f×) | search row %.0f B → %.0f B |", tc.name,
			float64(now)/n/1000, float64(with)/n/1000, float64(with)/float64(now),
			float64(rowBytes)/float64(rows), float64(rowBytes+copyBytes)/float64(rows))
	}
}
