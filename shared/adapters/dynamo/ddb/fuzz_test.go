package ddb_test

import (
	"cmp"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/ddb"
)

// FuzzMarshalAgreesWithAttributeValue: for any field values, MarshalMap
// writes the item the SDK's attributevalue writes (or both refuse it), and
// the SDK's item reads back as attributevalue reads it, so items written
// by either stay readable by the other.
func FuzzMarshalAgreesWithAttributeValue(f *testing.F) {
	f.Add("approval#a1", "v", "", -3, int64(1767319475600), 0.012345, 1e21, true, "alice", []byte{0, 1, 255}, "a", "1")
	f.Add("", "Grüße \"q\" <b>&</b>\n\t\u2028", "o", 0, int64(0), 0.0, math.Copysign(0, -1), false, "", []byte{}, "", "")
	f.Add("x", "\xff\xfe", "o", math.MaxInt32, int64(math.MinInt64), 5e-324, math.MaxFloat64, true, "b", []byte(nil), "k", "")
	f.Fuzz(func(t *testing.T, pk, value, optional string, count int, until int64, cost, ratio float64, done bool, agent string, payload []byte, key, label string) {
		v := testItem{
			base: base{PK: pk, SK: "-"}, Value: value, Optional: optional, Count: count, Until: until,
			Cost: cost, Ratio: ratio, Done: done, Flag: !done,
			Run: run{AgentID: agent, RunID: optional, Hops: count}, Comments: []comment{{By: agent, Text: value}},
			Payload: payload, Labels: map[string]string{key: label},
		}
		if agent != "" {
			v.ReplyTo = &run{AgentID: agent}
		}
		got, gotErr := ddb.MarshalMap(v)
		want, wantErr := attributevalue.MarshalMap(v)
		if (gotErr != nil) != (wantErr != nil) {
			t.Fatalf("MarshalMap errors differ: %v, SDK %v", gotErr, wantErr)
		}
		if wantErr != nil {
			return
		}
		if !reflect.DeepEqual(toSDKMap(got), want) {
			t.Fatalf("MarshalMap:\n got %s\nwant %s", show(toSDKMap(got)), show(want))
		}
		var mine, theirs testItem
		mineErr := ddb.UnmarshalMap(fromSDKMap(want), &mine)
		theirsErr := attributevalue.UnmarshalMap(want, &theirs)
		if (mineErr != nil) != (theirsErr != nil) {
			t.Fatalf("UnmarshalMap errors differ: %v, SDK %v", mineErr, theirsErr)
		}
		if !reflect.DeepEqual(mine, theirs) {
			t.Fatalf("UnmarshalMap:\n got %#v\nwant %#v", mine, theirs)
		}
	})
}

// capture answers every request with an empty JSON object and keeps the
// decoded bodies, without a network.
type capture struct {
	bodies []any
	answer string // "{}" when empty
}

func (c *capture) Do(req *http.Request) (*http.Response, error) {
	b, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	var body any
	_ = json.Unmarshal(b, &body)
	c.bodies = append(c.bodies, body)
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/x-amz-json-1.0"}},
		Body: io.NopCloser(strings.NewReader(cmp.Or(c.answer, "{}"))), Request: req}, nil
}

// FuzzPutItemIsTheSDKs: for any string, number text and bytes in an item,
// PutItem sends the document the SDK's client sends (as DynamoDB reads it:
// decoded JSON), or both refuse to send.
func FuzzPutItemIsTheSDKs(f *testing.F) {
	sdk, mine, c := capturing(f)
	f.Add("approval#a1", "-1.5", []byte("bytes\x00"), "a")
	f.Add("Grüße \"q\" <b>&</b>\n\t\u2028\x7f", "1e21", []byte{}, "")
	f.Add("\xff\xfe\x00", "", []byte(nil), "\u2029")
	f.Fuzz(func(t *testing.T, str, num string, bin []byte, member string) {
		it := map[string]types.AttributeValue{
			"pk": s(str), "sk": s("-"), "n": &types.AttributeValueMemberN{Value: num},
			"b":  &types.AttributeValueMemberB{Value: bin},
			"m":  &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{member: s(str)}},
			"l":  &types.AttributeValueMemberL{Value: []types.AttributeValue{s(member), &types.AttributeValueMemberB{Value: bin}}},
			"ss": &types.AttributeValueMemberSS{Value: []string{str, member}},
		}
		c.bodies = nil
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, sdkErr := sdk.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("t"), Item: it})
		_, myErr := mine.PutItem(ctx, &ddb.PutItemInput{TableName: aws.String("t"), Item: fromSDKMap(it)})
		if ctx.Err() != nil {
			t.Fatalf("no answer within 2 s: SDK error %v, error %v", sdkErr, myErr)
		}
		if (sdkErr != nil) != (myErr != nil) {
			t.Fatalf("errors differ: %v, SDK %v", myErr, sdkErr)
		}
		if len(c.bodies) == 1 {
			t.Fatalf("only one client sent: SDK error %v, error %v", sdkErr, myErr)
		}
		if len(c.bodies) == 2 && !reflect.DeepEqual(c.bodies[1], c.bodies[0]) {
			t.Fatalf("body:\n got %v\nwant %v", c.bodies[1], c.bodies[0])
		}
	})
}

// capturing is the SDK's client and this package's, both answered by one
// capture.
func capturing(f *testing.F) (*dynamodb.Client, *ddb.Client, *capture) {
	c := &capture{}
	cfg := aws.Config{Region: "eu-central-1", Credentials: credentials.NewStaticCredentialsProvider("k", "s", ""),
		BaseEndpoint: aws.String("http://127.0.0.1:1"), HTTPClient: c}
	sdk := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 })
	f.Setenv("AWS_ENDPOINT_URL_DYNAMODB", "")
	mine := ddb.NewFromConfig(cfg)
	mine.MaxAttempts = 1
	return sdk, mine, c
}

// FuzzGetItemAnswerReadsAsTheSDKReadsIt: whatever a GetItem answer holds,
// an item this package reads is the item the SDK's client reads.
func FuzzGetItemAnswerReadsAsTheSDKReadsIt(f *testing.F) {
	f.Add(`{"Item":{"pk":{"S":"a"},"n":{"N":"-1.5"},"b":{"B":"Ynl0ZXMA"},"ok":{"BOOL":true},"none":{"NULL":true}}}`)
	f.Add(`{"Item":{"m":{"M":{"x":{"S":"<&>"},"inner":{"M":{}}}},"l":{"L":[{"S":"a"},{"L":[]}]},"ss":{"SS":["a"]},"ns":{"NS":["1"]},"bs":{"BS":["eA=="]}}}`)
	f.Add(`{"Item":{"pk":{"S":"a","N":"1"}},"ConsumedCapacity":{"CapacityUnits":0.5}}`)
	f.Add(`{}`)
	sdk, mine, c := capturing(f)
	key := map[string]types.AttributeValue{"pk": s("a")}
	f.Fuzz(func(t *testing.T, answer string) {
		c.answer = answer
		ctx := context.Background()
		want, sdkErr := sdk.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("t"), Key: key})
		got, myErr := mine.GetItem(ctx, &ddb.GetItemInput{TableName: aws.String("t"), Key: fromSDKMap(key)})
		if sdkErr != nil || myErr != nil {
			return // which malformed answers each refuses may differ
		}
		if !reflect.DeepEqual(toSDKMap(got.Item), want.Item) {
			t.Fatalf("item:\n got %s\nwant %s", show(toSDKMap(got.Item)), show(want.Item))
		}
	})
}
