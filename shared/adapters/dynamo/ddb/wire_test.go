package ddb_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/ddb"
)

// recorder answers every request with answer and keeps what came.
type recorder struct {
	mu      sync.Mutex
	answer  string
	targets []string
	bodies  []any
	headers []http.Header
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	b, _ := io.ReadAll(req.Body)
	var body any
	_ = json.Unmarshal(b, &body)
	r.mu.Lock()
	r.targets = append(r.targets, req.Header.Get("X-Amz-Target"))
	r.bodies = append(r.bodies, body)
	r.headers = append(r.headers, req.Header.Clone())
	r.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	io.WriteString(w, r.answer)
}

// clients are the SDK's client and this package's, both sending to srv.
func clients(t *testing.T, srv *httptest.Server) (*dynamodb.Client, *ddb.Client) {
	t.Helper()
	cfg := aws.Config{Region: "eu-central-1", Credentials: credentials.NewStaticCredentialsProvider("k", "s", ""),
		BaseEndpoint: aws.String(srv.URL)}
	sdk := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 })
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", "")
	mine := ddb.NewFromConfig(cfg)
	mine.MaxAttempts = 1
	return sdk, mine
}

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

// item has every kind of value.
var item = map[string]types.AttributeValue{
	"pk": s("approval#a1"), "sk": s("-"), "n": &types.AttributeValueMemberN{Value: "-1.5"},
	"b": &types.AttributeValueMemberB{Value: []byte("bytes\x00")}, "ok": &types.AttributeValueMemberBOOL{Value: true},
	"none": &types.AttributeValueMemberNULL{Value: true}, "empty": s(""),
	"m":  &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"x": s("<&>"), "inner": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{}}}},
	"l":  &types.AttributeValueMemberL{Value: []types.AttributeValue{s("a"), &types.AttributeValueMemberN{Value: "2"}, &types.AttributeValueMemberL{}}},
	"ss": &types.AttributeValueMemberSS{Value: []string{"a", "b"}}, "ns": &types.AttributeValueMemberNS{Value: []string{"1"}},
	"bs": &types.AttributeValueMemberBS{Value: [][]byte{[]byte("x")}},
}

var key = map[string]types.AttributeValue{"pk": s("approval#a1"), "sk": s("-")}

// TestRequestsAreTheSDKs: each operation sends the document the SDK's
// client sends for the same input, to the same target.
func TestRequestsAreTheSDKs(t *testing.T) {
	str, yes, lim := aws.String, aws.Bool(true), aws.Int32(25)
	names := map[string]string{"#u": "until"}
	values := map[string]types.AttributeValue{":h": s("run-1"), ":now": &types.AttributeValueMemberN{Value: "1767319475600"}}
	tests := []struct {
		name string
		sdk  func(context.Context, *dynamodb.Client) error
		mine func(context.Context, *ddb.Client) error
	}{
		{"PutItem", func(ctx context.Context, c *dynamodb.Client) error {
			_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: str("t"), Item: item,
				ConditionExpression: str("attribute_not_exists(pk) OR #u < :now"), ExpressionAttributeNames: names,
				ExpressionAttributeValues: values, ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
			return err
		}, func(ctx context.Context, c *ddb.Client) error {
			_, err := c.PutItem(ctx, &ddb.PutItemInput{TableName: str("t"), Item: fromSDKMap(item),
				ConditionExpression: str("attribute_not_exists(pk) OR #u < :now"), ExpressionAttributeNames: names,
				ExpressionAttributeValues: fromSDKMap(values), ReturnConsumedCapacity: ddb.ReturnConsumedCapacityTotal})
			return err
		}},
		{"GetItem", func(ctx context.Context, c *dynamodb.Client) error {
			_, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: str("t"), Key: key, ConsistentRead: yes,
				ProjectionExpression: str("#s"), ExpressionAttributeNames: map[string]string{"#s": "status"},
				ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
			return err
		}, func(ctx context.Context, c *ddb.Client) error {
			_, err := c.GetItem(ctx, &ddb.GetItemInput{TableName: str("t"), Key: fromSDKMap(key), ConsistentRead: yes,
				ProjectionExpression: str("#s"), ExpressionAttributeNames: map[string]string{"#s": "status"},
				ReturnConsumedCapacity: ddb.ReturnConsumedCapacityTotal})
			return err
		}},
		{"UpdateItem", func(ctx context.Context, c *dynamodb.Client) error {
			_, err := c.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: str("t"), Key: key,
				UpdateExpression: str("ADD n :one"), ConditionExpression: str("n < :max"),
				ExpressionAttributeValues: values, ExpressionAttributeNames: names,
				ReturnValues: types.ReturnValueUpdatedNew, ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
				ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
			return err
		}, func(ctx context.Context, c *ddb.Client) error {
			_, err := c.UpdateItem(ctx, &ddb.UpdateItemInput{TableName: str("t"), Key: fromSDKMap(key),
				UpdateExpression: str("ADD n :one"), ConditionExpression: str("n < :max"),
				ExpressionAttributeValues: fromSDKMap(values), ExpressionAttributeNames: names,
				ReturnValues: ddb.ReturnValueUpdatedNew, ReturnValuesOnConditionCheckFailure: ddb.ReturnValuesOnConditionCheckFailureAllOld,
				ReturnConsumedCapacity: ddb.ReturnConsumedCapacityTotal})
			return err
		}},
		{"DeleteItem", func(ctx context.Context, c *dynamodb.Client) error {
			_, err := c.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: str("t"), Key: key,
				ConditionExpression: str("holder = :h"), ExpressionAttributeValues: values})
			return err
		}, func(ctx context.Context, c *ddb.Client) error {
			_, err := c.DeleteItem(ctx, &ddb.DeleteItemInput{TableName: str("t"), Key: fromSDKMap(key),
				ConditionExpression: str("holder = :h"), ExpressionAttributeValues: fromSDKMap(values)})
			return err
		}},
		{"Query", func(ctx context.Context, c *dynamodb.Client) error {
			_, err := c.Query(ctx, &dynamodb.QueryInput{TableName: str("t"), IndexName: str("byRoot"),
				KeyConditionExpression: str("pk = :h AND sk > :now"), FilterExpression: str("#u = :now"),
				ProjectionExpression: str("pk, sk"), ExpressionAttributeNames: names, ExpressionAttributeValues: values,
				ScanIndexForward: aws.Bool(false), ConsistentRead: yes, Limit: lim, ExclusiveStartKey: key,
				ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
			return err
		}, func(ctx context.Context, c *ddb.Client) error {
			_, err := c.Query(ctx, &ddb.QueryInput{TableName: str("t"), IndexName: str("byRoot"),
				KeyConditionExpression: str("pk = :h AND sk > :now"), FilterExpression: str("#u = :now"),
				ProjectionExpression: str("pk, sk"), ExpressionAttributeNames: names, ExpressionAttributeValues: fromSDKMap(values),
				ScanIndexForward: aws.Bool(false), ConsistentRead: yes, Limit: lim, ExclusiveStartKey: fromSDKMap(key),
				ReturnConsumedCapacity: ddb.ReturnConsumedCapacityTotal})
			return err
		}},
		{"BatchWriteItem", func(ctx context.Context, c *dynamodb.Client) error {
			_, err := c.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{
				"t": {{PutRequest: &types.PutRequest{Item: item}}, {DeleteRequest: &types.DeleteRequest{Key: key}}},
				"u": {{PutRequest: &types.PutRequest{Item: key}}}}, ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
			return err
		}, func(ctx context.Context, c *ddb.Client) error {
			_, err := c.BatchWriteItem(ctx, &ddb.BatchWriteItemInput{RequestItems: map[string][]ddb.WriteRequest{
				"t": {{PutRequest: &ddb.PutRequest{Item: fromSDKMap(item)}}, {DeleteRequest: &ddb.DeleteRequest{Key: fromSDKMap(key)}}},
				"u": {{PutRequest: &ddb.PutRequest{Item: fromSDKMap(key)}}}}, ReturnConsumedCapacity: ddb.ReturnConsumedCapacityTotal})
			return err
		}},
		{"BatchGetItem", func(ctx context.Context, c *dynamodb.Client) error {
			_, err := c.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
				"t": {Keys: []map[string]types.AttributeValue{key, key}, ConsistentRead: yes, ProjectionExpression: str("#s"),
					ExpressionAttributeNames: map[string]string{"#s": "sk"}}}, ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
			return err
		}, func(ctx context.Context, c *ddb.Client) error {
			_, err := c.BatchGetItem(ctx, &ddb.BatchGetItemInput{RequestItems: map[string]ddb.KeysAndAttributes{
				"t": {Keys: []map[string]ddb.AttributeValue{fromSDKMap(key), fromSDKMap(key)}, ConsistentRead: yes, ProjectionExpression: str("#s"),
					ExpressionAttributeNames: map[string]string{"#s": "sk"}}}, ReturnConsumedCapacity: ddb.ReturnConsumedCapacityTotal})
			return err
		}},
		{"DescribeTable", func(ctx context.Context, c *dynamodb.Client) error {
			_, err := c.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: str("t")})
			return err
		}, func(ctx context.Context, c *ddb.Client) error {
			_, err := c.DescribeTable(ctx, "t")
			return err
		}},
		{"CreateTable", func(ctx context.Context, c *dynamodb.Client) error {
			_, err := c.CreateTable(ctx, &dynamodb.CreateTableInput{TableName: str("t"), BillingMode: types.BillingModePayPerRequest,
				AttributeDefinitions: []types.AttributeDefinition{{AttributeName: str("pk"), AttributeType: types.ScalarAttributeTypeS}},
				KeySchema:            []types.KeySchemaElement{{AttributeName: str("pk"), KeyType: types.KeyTypeHash}},
				GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{IndexName: str("i"),
					KeySchema:  []types.KeySchemaElement{{AttributeName: str("pk"), KeyType: types.KeyTypeHash}},
					Projection: &types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: []string{"a"}}}}})
			return err
		}, func(ctx context.Context, c *ddb.Client) error {
			return c.CreateTable(ctx, &ddb.CreateTableInput{TableName: "t", BillingMode: ddb.BillingModePayPerRequest,
				AttributeDefinitions: []ddb.AttributeDefinition{{AttributeName: "pk", AttributeType: ddb.ScalarAttributeTypeS}},
				KeySchema:            []ddb.KeySchemaElement{{AttributeName: "pk", KeyType: ddb.KeyTypeHash}},
				GlobalSecondaryIndexes: []ddb.GlobalSecondaryIndex{{IndexName: "i",
					KeySchema:  []ddb.KeySchemaElement{{AttributeName: "pk", KeyType: ddb.KeyTypeHash}},
					Projection: ddb.Projection{ProjectionType: ddb.ProjectionTypeInclude, NonKeyAttributes: []string{"a"}}}}})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{answer: `{}`}
			srv := httptest.NewServer(rec)
			t.Cleanup(srv.Close)
			sdk, mine := clients(t, srv)
			if err := tt.sdk(t.Context(), sdk); err != nil {
				t.Fatalf("SDK: %v", err)
			}
			if err := tt.mine(t.Context(), mine); err != nil {
				t.Fatalf("ddb: %v", err)
			}
			if rec.targets[0] != rec.targets[1] {
				t.Errorf("X-Amz-Target %q, the SDK's %q", rec.targets[1], rec.targets[0])
			}
			if !reflect.DeepEqual(rec.bodies[1], rec.bodies[0]) {
				got, _ := json.Marshal(rec.bodies[1])
				want, _ := json.Marshal(rec.bodies[0])
				t.Errorf("request\n got %s\nwant %s", got, want)
			}
			for _, h := range []string{"Content-Type", "Accept-Encoding"} {
				if got, want := rec.headers[1].Get(h), rec.headers[0].Get(h); got != want {
					t.Errorf("%s %q, the SDK's %q", h, got, want)
				}
			}
			if !strings.Contains(rec.headers[1].Get("Authorization"), "/eu-central-1/dynamodb/aws4_request") {
				t.Errorf("Authorization %q: want a SigV4 signature for dynamodb in eu-central-1", rec.headers[1].Get("Authorization"))
			}
		})
	}
}

// TestAnswersReadAsTheSDKReadsThem: the same answer document gives the same
// items, keys, counts and capacities through both clients.
func TestAnswersReadAsTheSDKReadsThem(t *testing.T) {
	itemJSON := `{"pk":{"S":"approval#a1"},"sk":{"S":"-"},"n":{"N":"-1.5"},"b":{"B":"Ynl0ZXMA"},"ok":{"BOOL":true},` +
		`"none":{"NULL":true},"empty":{"S":""},"m":{"M":{"x":{"S":"<&>"},"inner":{"M":{}}}},` +
		`"l":{"L":[{"S":"a"},{"N":"2"},{"L":[]}]},"ss":{"SS":["a","b"]},"ns":{"NS":["1"]},"bs":{"BS":["eA=="]}}`
	keyJSON := `{"pk":{"S":"approval#a1"},"sk":{"S":"-"}}`
	capJSON := `{"TableName":"t","CapacityUnits":1.5,"ReadCapacityUnits":0.5,"WriteCapacityUnits":1.0}`
	rec := &recorder{}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	sdk, mine := clients(t, srv)
	ctx := t.Context()

	rec.answer = `{"Item":` + itemJSON + `,"ConsumedCapacity":` + capJSON + `}`
	wantGet, err := sdk.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("t"), Key: key})
	if err != nil {
		t.Fatal(err)
	}
	gotGet, err := mine.GetItem(ctx, &ddb.GetItemInput{TableName: aws.String("t"), Key: fromSDKMap(key)})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "GetItem item", toSDKMap(gotGet.Item), wantGet.Item)
	equalCapacity(t, gotGet.ConsumedCapacity, wantGet.ConsumedCapacity)

	rec.answer = `{"Attributes":` + itemJSON + `}`
	wantUpd, err := sdk.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String("t"), Key: key})
	if err != nil {
		t.Fatal(err)
	}
	gotUpd, err := mine.UpdateItem(ctx, &ddb.UpdateItemInput{TableName: aws.String("t"), Key: fromSDKMap(key)})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "UpdateItem attributes", toSDKMap(gotUpd.Attributes), wantUpd.Attributes)

	rec.answer = `{"Items":[` + itemJSON + `,` + keyJSON + `],"Count":2,"ScannedCount":3,"LastEvaluatedKey":` + keyJSON + `,"ConsumedCapacity":` + capJSON + `}`
	wantQ, err := sdk.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("t")})
	if err != nil {
		t.Fatal(err)
	}
	gotQ, err := mine.Query(ctx, &ddb.QueryInput{TableName: aws.String("t")})
	if err != nil {
		t.Fatal(err)
	}
	if len(gotQ.Items) != len(wantQ.Items) || gotQ.Count != wantQ.Count || gotQ.ScannedCount != wantQ.ScannedCount {
		t.Fatalf("Query: %d items, count %d/%d; the SDK's %d, %d/%d", len(gotQ.Items), gotQ.Count, gotQ.ScannedCount,
			len(wantQ.Items), wantQ.Count, wantQ.ScannedCount)
	}
	for i := range gotQ.Items {
		equal(t, "Query item", toSDKMap(gotQ.Items[i]), wantQ.Items[i])
	}
	equal(t, "Query LastEvaluatedKey", toSDKMap(gotQ.LastEvaluatedKey), wantQ.LastEvaluatedKey)
	equalCapacity(t, gotQ.ConsumedCapacity, wantQ.ConsumedCapacity)

	rec.answer = `{"Items":[],"Count":0,"ScannedCount":0}` // the last page: no LastEvaluatedKey
	if last, err := mine.Query(ctx, &ddb.QueryInput{TableName: aws.String("t")}); err != nil || last.LastEvaluatedKey != nil {
		t.Errorf("last page: LastEvaluatedKey %v, %v; want nil", last.LastEvaluatedKey, err)
	}

	rec.answer = `{"UnprocessedItems":{"t":[{"PutRequest":{"Item":` + itemJSON + `}},{"DeleteRequest":{"Key":` + keyJSON + `}}]},` +
		`"ConsumedCapacity":[` + capJSON + `]}`
	wantBW, err := sdk.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{}})
	if err != nil {
		t.Fatal(err)
	}
	gotBW, err := mine.BatchWriteItem(ctx, &ddb.BatchWriteItemInput{RequestItems: map[string][]ddb.WriteRequest{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(gotBW.UnprocessedItems["t"]) != 2 || len(gotBW.ConsumedCapacity) != 1 {
		t.Fatalf("BatchWriteItem answer %+v", gotBW)
	}
	equal(t, "unprocessed put", toSDKMap(gotBW.UnprocessedItems["t"][0].PutRequest.Item), wantBW.UnprocessedItems["t"][0].PutRequest.Item)
	equal(t, "unprocessed delete", toSDKMap(gotBW.UnprocessedItems["t"][1].DeleteRequest.Key), wantBW.UnprocessedItems["t"][1].DeleteRequest.Key)
	equalCapacity(t, &gotBW.ConsumedCapacity[0], &wantBW.ConsumedCapacity[0])

	rec.answer = `{"Responses":{"t":[` + itemJSON + `]},"UnprocessedKeys":{"t":{"Keys":[` + keyJSON + `],"ConsistentRead":true}},` +
		`"ConsumedCapacity":[` + capJSON + `]}`
	wantBG, err := sdk.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{}})
	if err != nil {
		t.Fatal(err)
	}
	gotBG, err := mine.BatchGetItem(ctx, &ddb.BatchGetItemInput{RequestItems: map[string]ddb.KeysAndAttributes{}})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "BatchGetItem response", toSDKMap(gotBG.Responses["t"][0]), wantBG.Responses["t"][0])
	equal(t, "BatchGetItem unprocessed key", toSDKMap(gotBG.UnprocessedKeys["t"].Keys[0]), wantBG.UnprocessedKeys["t"].Keys[0])
	if c := gotBG.UnprocessedKeys["t"].ConsistentRead; c == nil || !*c {
		t.Errorf("unprocessed keys' ConsistentRead %v, want true", c)
	}

	rec.answer = `{"Table":{"TableName":"t","TableStatus":"ACTIVE","CreationDateTime":1.7e9,` +
		`"KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}],` +
		`"GlobalSecondaryIndexes":[{"IndexName":"byRoot","IndexStatus":"ACTIVE","KeySchema":[]}]}}`
	d, err := mine.DescribeTable(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	want := &ddb.TableDescription{TableName: "t", TableStatus: ddb.TableStatusActive,
		KeySchema:              []ddb.KeySchemaElement{{AttributeName: "pk", KeyType: ddb.KeyTypeHash}, {AttributeName: "sk", KeyType: ddb.KeyTypeRange}},
		GlobalSecondaryIndexes: []ddb.IndexDescription{{IndexName: "byRoot", IndexStatus: "ACTIVE"}}}
	if !reflect.DeepEqual(d, want) {
		t.Errorf("DescribeTable = %+v, want %+v", d, want)
	}
}

func equal(t *testing.T, what string, got, want map[string]types.AttributeValue) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got %s\nwant %s", what, show(got), show(want))
	}
}

func equalCapacity(t *testing.T, got *ddb.ConsumedCapacity, want *types.ConsumedCapacity) {
	t.Helper()
	if got == nil || want == nil {
		t.Fatalf("capacity %v, the SDK's %v", got, want)
	}
	if aws.ToString(got.TableName) != aws.ToString(want.TableName) || aws.ToFloat64(got.CapacityUnits) != aws.ToFloat64(want.CapacityUnits) ||
		aws.ToFloat64(got.ReadCapacityUnits) != aws.ToFloat64(want.ReadCapacityUnits) ||
		aws.ToFloat64(got.WriteCapacityUnits) != aws.ToFloat64(want.WriteCapacityUnits) {
		t.Errorf("capacity %+v, the SDK's %+v", *got, *want)
	}
}
