package dynamo

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

// benchCorpus makes n messages, deterministically: ten agents, half of all
// messages between alice and bob (the "newest 200 of 50,000" pair view), the
// rest between random pairs; chains of four; 8 to 24 words each from a
// Zipf-distributed vocabulary of 5,000 words, plus planted words of known
// frequency: "invoice" in ~1%, "quarterly" in ~2%, "zebrafish" in 10 messages.
func benchCorpus(n int, start time.Time) []switchboard.AgentMessage {
	r := rand.New(rand.NewPCG(1, 2))
	agents := []string{"alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy"}
	syll := []string{"ka", "lo", "mi", "nu", "pe", "ra", "si", "to", "va", "ze", "bri", "dor", "fen", "gul", "hax"}
	vocab := make([]string, 5000)
	for i := range vocab {
		var b strings.Builder
		for j, k := 0, i; j < 3 || k > 0; j++ {
			b.WriteString(syll[k%len(syll)])
			k /= len(syll)
		}
		vocab[i] = b.String() + strconv.Itoa(i%7)
	}
	zipf := rand.NewZipf(r, 1.1, 1, uint64(len(vocab)-1))
	channels := []switchboard.Channel{switchboard.ChannelAsk, switchboard.ChannelTask, switchboard.ChannelTaskComment, switchboard.ChannelTaskResult}
	msgs := make([]switchboard.AgentMessage, n)
	root := ""
	for i := range msgs {
		from, to := "alice", "bob"
		if i%2 == 1 {
			from, to = agents[r.IntN(len(agents))], agents[r.IntN(len(agents))]
		}
		if r.IntN(2) == 0 {
			from, to = to, from
		}
		words := make([]string, 8+r.IntN(17))
		for j := range words {
			words[j] = vocab[zipf.Uint64()]
		}
		switch {
		case i%(n/10+1) == 7:
			words = append(words, "zebrafish")
		case r.IntN(100) == 0:
			words = append(words, "invoice")
		}
		if r.IntN(50) == 0 {
			words = append(words, "quarterly")
		}
		if i%4 == 0 {
			root = fmt.Sprintf("root-%06d", i)
		}
		msgs[i] = switchboard.AgentMessage{
			ID: fmt.Sprintf("m%06d", i), From: from, To: to,
			Channel: channels[r.IntN(len(channels))], Direction: []switchboard.Direction{switchboard.DirectionRequest, switchboard.DirectionResponse}[i%2],
			Content: strings.Join(words, " "), RunID: fmt.Sprintf("run-%06d", i), RootRunID: root,
			Status: switchboard.MessageDelivered, OccurredAt: start.Add(time.Duration(i) * time.Second),
		}
	}
	return msgs
}
