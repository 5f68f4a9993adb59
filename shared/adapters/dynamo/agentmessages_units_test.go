package dynamo

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

// itemBytes is an item's size as DynamoDB bills it: per attribute its
// name's bytes plus its value's (a string's bytes; a number about one byte
// per two digits, plus one), counting only the attributes keep admits.
func itemBytes(av map[string]types.AttributeValue, keep func(string) bool) int {
	n := 0
	for name, v := range av {
		if !keep(name) {
			continue
		}
		n += len(name)
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			n += len(v.Value)
		case *types.AttributeValueMemberN:
			n += (len(strings.TrimLeft(v.Value, "-"))+1)/2 + 1
		default:
			n++
		}
	}
	return n
}

// writeUnits is what one write of size bytes costs: 1 per KB, at least 1.
func writeUnits(bytes int) int { return max(1, int(math.Ceil(float64(bytes)/1024))) }

// messageWrites is the write units one message costs on AWS: its row, one
// entry per index (projected as indexes says: nil = the catalogue's), and
// its search rows; before is the layout these replaced (every index
// projecting every attribute, search rows carrying the message's pk).
func messageWrites(t *testing.T, m switchboard.AgentMessage, before bool) (row, index, search int) {
	t.Helper()
	it, tokens := toItems(m, 30*24*time.Hour)
	if before && it.Body != "" {
		it.Content, it.Body = it.Body, ""
	}
	av, err := attributevalue.MarshalMap(it)
	if err != nil {
		t.Fatal(err)
	}
	all := func(string) bool { return true }
	row = writeUnits(itemBytes(av, all))
	table, _ := deploy.TableByID("agentmessages")
	for _, ix := range table.Indexes {
		keep := all
		if attrs := ix.NonKeyAttributes(table); attrs != nil && !before {
			keep = func(name string) bool {
				switch name {
				case table.PK.Name, table.SK.Name, ix.PK.Name, ix.SK.Name:
					return true
				}
				for _, a := range attrs {
					if a == name {
						return true
					}
				}
				return false
			}
		}
		index += writeUnits(itemBytes(av, keep))
	}
	for _, tok := range tokens {
		av, err := attributevalue.MarshalMap(tok)
		if err != nil {
			t.Fatal(err)
		}
		n := itemBytes(av, all)
		if before {
			n += len("mpk") + len(it.PK)
		}
		search += writeUnits(n)
	}
	return row, index, search
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

// TestAgentMessageWriteUnits computes what a message writes on AWS, from
// the item shapes (dynalite reports no index writes): every index entry
// is one write unit whatever the content's length, and no message writes
// more than under the former layout. go test -v prints the table that
// docs/performance.md quotes.
func TestAgentMessageWriteUnits(t *testing.T) {
	at := time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC)
	for _, tc := range []struct {
		name           string
		distinct, size int
	}{
		{"benchmark-like message (16 words, 13 distinct)", 13, 140},
		{"short ask (200 B, 25 words)", 25, 200},
		{"1 KB message of 30 words", 30, 1024},
		{"3 KB answer, 120 distinct words", 120, 3 << 10},
		{"20 KB report, 400 distinct words", 400, 20 << 10},
	} {
		m := switchboard.AgentMessage{
			ID: "01JQ7Z3X9K2M4N6P8R0T2V4X6Z", From: "hermes", To: "atlas", Channel: switchboard.ChannelAsk,
			Direction: switchboard.DirectionResponse, Content: textOf(tc.distinct, tc.size),
			RunID: "run-01JQ7Z3X9K2M4N6P8R0T2V4X6Z", ParentRunID: "run-01JQ7Z3X9K2M4N6P8R0T2V4X60",
			RootRunID: "run-01JQ7Z3X9K2M4N6P8R0T2V4X60", Status: switchboard.MessageDelivered, OccurredAt: at,
		}
		r0, i0, s0 := messageWrites(t, m, true)
		r1, i1, s1 := messageWrites(t, m, false)
		requests := 1 + (len(switchboard.SearchTerms(m.Content, switchboard.MaxTermsPerMessage))+24)/25
		t.Logf("| %s | %d | %d + %d + %d = %d | %d + %d + %d = %d |", tc.name, requests,
			r0, i0, s0, r0+i0+s0, r1, i1, s1, r1+i1+s1)
		if i1 != 4 {
			t.Errorf("%s: the four index entries cost %d write units, want 4", tc.name, i1)
		}
		if r1+i1+s1 > r0+i0+s0 {
			t.Errorf("%s: %d write units, more than the former %d", tc.name, r1+i1+s1, r0+i0+s0)
		}
	}
	// Prose: the 1 KB pieces of the design document, on average.
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "design.md"))
	if err != nil {
		t.Fatal(err)
	}
	var n, requests, words, before, after int
	for text := string(doc); len(text) >= 1024; text = text[1024:] {
		m := switchboard.AgentMessage{ID: "01JQ7Z3X9K2M4N6P8R0T2V4X6Z", From: "hermes", To: "atlas",
			Channel: switchboard.ChannelAsk, Direction: switchboard.DirectionResponse, Content: strings.ToValidUTF8(text[:1024], ""),
			RunID: "run-01JQ7Z3X9K2M4N6P8R0T2V4X6Z", RootRunID: "run-01JQ7Z3X9K2M4N6P8R0T2V4X60",
			Status: switchboard.MessageDelivered, OccurredAt: at}
		r0, i0, s0 := messageWrites(t, m, true)
		r1, i1, s1 := messageWrites(t, m, false)
		terms := len(switchboard.SearchTerms(m.Content, switchboard.MaxTermsPerMessage))
		n, words, requests = n+1, words+terms, requests+1+(terms+24)/25
		before, after = before+r0+i0+s0, after+r1+i1+s1
	}
	t.Logf("| 1 KB of prose (docs/design.md, %d pieces, %.0f distinct words each) | %.1f | %.1f | %.1f |",
		n, float64(words)/float64(n), float64(requests)/float64(n), float64(before)/float64(n), float64(after)/float64(n))
}
