package ddb_test

import (
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/ddb"
)

// The shapes of the stores' item structs: tagged fields with and without
// omitempty, numbers, a bool, a nested struct, a pointer to one, a list of
// them, bytes, a map, an untagged and a skipped field, an embedded struct.
type (
	run struct {
		AgentID string `dynamodbav:"agentId"`
		RunID   string `dynamodbav:"runId,omitempty"`
		Hops    int    `dynamodbav:"hops,omitempty"`
	}
	comment struct {
		By   string `dynamodbav:"by"`
		Text string `dynamodbav:"text"`
	}
	base struct {
		PK string `dynamodbav:"pk"`
		SK string `dynamodbav:"sk"`
	}
	testItem struct {
		base
		Value     string            `dynamodbav:"value"`
		Optional  string            `dynamodbav:"optional,omitempty"`
		Count     int               `dynamodbav:"n"`
		Until     int64             `dynamodbav:"until"`
		ExpiresAt int64             `dynamodbav:"expiresAt,omitempty"`
		Cost      float64           `dynamodbav:"costUsd"`
		Ratio     float64           `dynamodbav:"ratio,omitempty"`
		Done      bool              `dynamodbav:"done"`
		Flag      bool              `dynamodbav:"flag,omitempty"`
		Run       run               `dynamodbav:"run"`
		ReplyTo   *run              `dynamodbav:"replyTo,omitempty"`
		ExecRun   *run              `dynamodbav:"execRun"`
		Comments  []comment         `dynamodbav:"comments"`
		Payload   []byte            `dynamodbav:"payload,omitempty"`
		Labels    map[string]string `dynamodbav:"labels,omitempty"`
		Untagged  string
		Skipped   string `dynamodbav:"-"`
		private   string
	}
)

func itemCases() map[string]testItem {
	return map[string]testItem{
		"zero": {},
		"full": {
			base:  base{PK: "approval#a1", SK: "-"},
			Value: "v", Optional: "o", Count: -3, Until: 1767319475600, ExpiresAt: 1767323075,
			Cost: 0.012345, Ratio: 1e21, Done: true, Flag: true,
			Run:      run{AgentID: "alice", RunID: "r1", Hops: 2},
			ReplyTo:  &run{AgentID: "bob"},
			ExecRun:  &run{},
			Comments: []comment{{By: "alice", Text: "done"}, {}},
			Payload:  []byte{0, 1, 2, 255},
			Labels:   map[string]string{"a": "1"},
			Untagged: "u", Skipped: "never stored", private: "never stored",
		},
		"empty list and map":  {Comments: []comment{}, Labels: map[string]string{}, Payload: []byte{}},
		"unicode and escapes": {Value: "Grüße \"quoted\" <b>&</b>\n\t\u2028", Cost: 1.5},
	}
}

// TestMarshalAgreesWithAttributeValue: every shape marshals to the item
// the SDK's attributevalue writes, and the SDK's items unmarshal to the
// value attributevalue reads back (items in the tables stay readable both
// ways).
func TestMarshalAgreesWithAttributeValue(t *testing.T) {
	for name, v := range itemCases() {
		t.Run(name, func(t *testing.T) {
			got, err := ddb.MarshalMap(v)
			if err != nil {
				t.Fatal(err)
			}
			want, err := attributevalue.MarshalMap(v)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(toSDKMap(got), want) {
				t.Errorf("MarshalMap:\n got %s\nwant %s", show(toSDKMap(got)), show(want))
			}

			var mine, theirs testItem
			if err := ddb.UnmarshalMap(fromSDKMap(want), &mine); err != nil {
				t.Fatal(err)
			}
			if err := attributevalue.UnmarshalMap(want, &theirs); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(mine, theirs) {
				t.Errorf("UnmarshalMap:\n got %#v\nwant %#v", mine, theirs)
			}
		})
	}
}

func TestMarshalOfOneValueAgrees(t *testing.T) {
	for _, v := range []any{
		[]comment{{By: "a", Text: "b"}}, run{AgentID: "a"}, "s", 42, 2.5, true, (*run)(nil), []string(nil), []int{1, 2},
	} {
		got, err := ddb.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		want, err := attributevalue.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(toSDK(got), want) {
			t.Errorf("Marshal(%#v) = %s, want %s", v, show(toSDK(got)), show(want))
		}
	}
}

// Attributes a struct does not know are skipped; NULL reads as the zero
// value; a name differing only in case still finds its field; a number
// that does not fit, or a value of the wrong kind, is an error.
func TestUnmarshalEdges(t *testing.T) {
	var it testItem
	err := ddb.UnmarshalMap(map[string]ddb.AttributeValue{
		"pk": &ddb.AttributeValueMemberS{Value: "p"}, "unknown": &ddb.AttributeValueMemberS{Value: "x"},
		"run": &ddb.AttributeValueMemberNULL{Value: true}, "VALUE": &ddb.AttributeValueMemberS{Value: "v"},
	}, &it)
	if err != nil || it.PK != "p" || it.Value != "v" || it.Run != (run{}) {
		t.Errorf("UnmarshalMap = %+v, %v", it, err)
	}
	var small struct {
		N int8 `dynamodbav:"n"`
	}
	if err := ddb.UnmarshalMap(map[string]ddb.AttributeValue{"n": &ddb.AttributeValueMemberN{Value: "300"}}, &small); err == nil {
		t.Error("300 into an int8: no error")
	}
	if err := ddb.UnmarshalMap(map[string]ddb.AttributeValue{"n": &ddb.AttributeValueMemberS{Value: "3"}}, &small); err == nil {
		t.Error("a string into an int8: no error")
	}
	var anything map[string]any
	if err := ddb.UnmarshalMap(map[string]ddb.AttributeValue{
		"s": &ddb.AttributeValueMemberS{Value: "x"}, "n": &ddb.AttributeValueMemberN{Value: "1.5"},
		"l": &ddb.AttributeValueMemberL{Value: []ddb.AttributeValue{&ddb.AttributeValueMemberBOOL{Value: true}}},
	}, &anything); err != nil {
		t.Fatal(err)
	}
	if want := map[string]any{"s": "x", "n": 1.5, "l": []any{true}}; !reflect.DeepEqual(anything, want) {
		t.Errorf("into map[string]any: %v, want %v", anything, want)
	}
}
