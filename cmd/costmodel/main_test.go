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

// Every change lowers the bill on its own, and all of them bring the
// reference team under the $3 a month the stack aims at.
func TestEachChangeLowersTheBill(t *testing.T) {
	before := Total(Bill(reference, Changes{}))
	for _, ch := range changeNames {
		var c Changes
		ch.set(&c)
		if got := Total(Bill(reference, c)); got >= before {
			t.Errorf("%s: $%.2f a month, not less than $%.2f before", ch.name, got, before)
		}
	}
	if after := Total(Bill(reference, all)); after >= 3 {
		t.Errorf("the reference team costs $%.2f a month, over the $3 goal", after)
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
