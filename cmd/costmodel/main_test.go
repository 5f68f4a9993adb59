package main

import (
	"os"
	"strings"
	"testing"
)

// docs/cost.md shows the model's output as it is: change the model or the
// catalogue, and `go run ./cmd/costmodel` gives the table to paste.
func TestCostDocIsTheModel(t *testing.T) {
	doc, err := os.ReadFile("../../docs/cost.md")
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := write(&out, reference); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), out.String()) {
		t.Errorf("docs/cost.md does not hold the model's output; paste the output of `go run ./cmd/costmodel` into it:\n%s", out.String())
	}
}

// Every fixed-cost change lowers the bill on its own, and together they
// bring the reference team under the $3 a month the stack aims at. The
// wake queue comes on top (WakeQueueUSD; docs/cost.md says what it buys).
func TestEachChangeLowersTheBill(t *testing.T) {
	before := Total(Bill(reference, Changes{}))
	for _, ch := range changeNames {
		var c Changes
		ch.set(&c)
		if got := Total(Bill(reference, c)); got >= before {
			t.Errorf("%s: $%.2f a month, not less than $%.2f before", ch.name, got, before)
		}
	}
	if after := Total(Bill(reference, all)) - WakeQueueUSD(reference); after >= 3 {
		t.Errorf("the fixed-cost changes leave the reference team at $%.2f a month, over the $3 goal", after)
	}
	if q := WakeQueueUSD(reference); q <= 0 || q > 0.5 {
		t.Errorf("the wake queue adds $%.2f a month; want the polls of an empty queue, about a third of a dollar", q)
	}
}

// The secrets line follows the deploy catalogue: two secrets, read once
// each per cold start.
func TestGroupedSecretsAreTheStacksTwo(t *testing.T) {
	lines := Bill(reference, all)
	if got := lines[0]; got.What != "secrets" || got.Units != 2 {
		t.Errorf("secrets line = %+v, want 2 secrets", got)
	}
}
