package askagent_test

import (
	"maps"
	"testing"
	"time"
)

// writeOps are the DynamoDB operations that write.
var writeOps = []string{"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"}

func writes(byOp map[string]int) (n int) {
	for _, op := range writeOps {
		n += byOp[op]
	}
	return n
}

func diff(after, before map[string]int) map[string]int {
	out := maps.Clone(after)
	for k, v := range before {
		out[k] -= v
		if out[k] == 0 {
			delete(out, k)
		}
	}
	return out
}

// BenchmarkAsk compares a question through ask_agent (A asks B, B answers,
// A answers) with the same two runs made directly, on the scripted model:
// the difference is what the state machine, the guard, the rows and the
// lease add. It reports DynamoDB writes per operation, the machine's calls
// of our functions (its Tasks) and its state transitions per ask (the
// Tasks plus the final Pass state).
//
//	go test -run '^$' -bench Ask -benchtime 50x ./shared/usecases/askagent/
func BenchmarkAsk(b *testing.B) {
	w := newWorld(b, 30*time.Second, map[string]agentSpec{
		"alice": {model: scripted("Alice", "Alice here.")},
		"bob":   {model: scripted("Bob", "Bob says 42.")},
	})
	const question = "how many trucks are on the road today?"
	b.Run("direct", func(b *testing.B) {
		before := w.dynamo.Stats().ByOp
		for b.Loop() {
			w.run(b, "bob", question)
			w.run(b, "alice", "Alice hears: Bob says 42.")
		}
		d := diff(w.dynamo.Stats().ByOp, before)
		b.ReportMetric(float64(writes(d))/float64(b.N), "ddb-writes/op")
	})
	b.Run("ask_agent", func(b *testing.B) {
		before := w.dynamo.Stats().ByOp
		tasks := w.tasks()
		for b.Loop() {
			res := w.run(b, "alice", askLine("bob", question))
			if res.Calls[0].Envelope.Status != "ok" {
				b.Fatalf("ask %+v", res.Calls[0].Envelope)
			}
		}
		d := diff(w.dynamo.Stats().ByOp, before)
		b.ReportMetric(float64(writes(d))/float64(b.N), "ddb-writes/op")
		// Every Task is one state; the delivered path ends in one Pass.
		b.ReportMetric(float64(w.tasks()-tasks)/float64(b.N), "invocations/op")
		b.ReportMetric(float64(w.tasks()-tasks)/float64(b.N)+1, "transitions/op")
		b.Logf("DynamoDB requests per ask by operation (N=%d): %v", b.N, perOp(d, b.N))
	})
}

func perOp(d map[string]int, n int) map[string]float64 {
	out := map[string]float64{}
	for k, v := range d {
		out[k] = float64(v) / float64(n)
	}
	return out
}
