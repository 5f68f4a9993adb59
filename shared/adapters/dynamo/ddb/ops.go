package ddb

import (
	"context"
)

// The item operations. Each input and output has the SDK's field names and
// types; the request documents are the JSON the API takes, the fields
// omitted when empty, as the SDK's serializers omit them.

// PutItemInput is PutItem's request.
type PutItemInput struct {
	TableName                           *string
	Item                                map[string]AttributeValue
	ConditionExpression                 *string
	ExpressionAttributeNames            map[string]string
	ExpressionAttributeValues           map[string]AttributeValue
	ReturnConsumedCapacity              ReturnConsumedCapacity
	ReturnValuesOnConditionCheckFailure ReturnValuesOnConditionCheckFailure
}

// PutItemOutput is PutItem's answer.
type PutItemOutput struct {
	ConsumedCapacity *ConsumedCapacity
}

// PutItem writes one item.
func (c *Client) PutItem(ctx context.Context, in *PutItemInput) (*PutItemOutput, error) {
	var out singleOut
	err := c.call(ctx, "PutItem", &request{
		TableName: in.TableName, Item: in.Item,
		ConditionExpression: in.ConditionExpression, ExpressionAttributeNames: in.ExpressionAttributeNames,
		ExpressionAttributeValues: in.ExpressionAttributeValues, ReturnConsumedCapacity: string(in.ReturnConsumedCapacity),
		ReturnValuesOnConditionCheckFailure: string(in.ReturnValuesOnConditionCheckFailure),
	}, &out)
	if err != nil {
		return nil, err
	}
	return &PutItemOutput{ConsumedCapacity: out.ConsumedCapacity}, nil
}

// GetItemInput is GetItem's request.
type GetItemInput struct {
	TableName                *string
	Key                      map[string]AttributeValue
	ConsistentRead           *bool
	ProjectionExpression     *string
	ExpressionAttributeNames map[string]string
	ReturnConsumedCapacity   ReturnConsumedCapacity
}

// GetItemOutput is GetItem's answer; Item is nil when there is none.
type GetItemOutput struct {
	Item             map[string]AttributeValue
	ConsumedCapacity *ConsumedCapacity
}

// GetItem reads one item.
func (c *Client) GetItem(ctx context.Context, in *GetItemInput) (*GetItemOutput, error) {
	var out singleOut
	err := c.call(ctx, "GetItem", &request{
		TableName: in.TableName, Key: in.Key, ConsistentRead: in.ConsistentRead,
		ProjectionExpression: in.ProjectionExpression, ExpressionAttributeNames: in.ExpressionAttributeNames,
		ReturnConsumedCapacity: string(in.ReturnConsumedCapacity),
	}, &out)
	if err != nil {
		return nil, err
	}
	return &GetItemOutput{Item: out.Item, ConsumedCapacity: out.ConsumedCapacity}, nil
}

// UpdateItemInput is UpdateItem's request.
type UpdateItemInput struct {
	TableName                           *string
	Key                                 map[string]AttributeValue
	UpdateExpression                    *string
	ConditionExpression                 *string
	ExpressionAttributeNames            map[string]string
	ExpressionAttributeValues           map[string]AttributeValue
	ReturnValues                        ReturnValue
	ReturnValuesOnConditionCheckFailure ReturnValuesOnConditionCheckFailure
	ReturnConsumedCapacity              ReturnConsumedCapacity
}

// UpdateItemOutput is UpdateItem's answer.
type UpdateItemOutput struct {
	Attributes       map[string]AttributeValue
	ConsumedCapacity *ConsumedCapacity
}

// UpdateItem changes (or creates) one item.
func (c *Client) UpdateItem(ctx context.Context, in *UpdateItemInput) (*UpdateItemOutput, error) {
	var out singleOut
	err := c.call(ctx, "UpdateItem", &request{
		TableName: in.TableName, Key: in.Key, UpdateExpression: in.UpdateExpression,
		ConditionExpression: in.ConditionExpression, ExpressionAttributeNames: in.ExpressionAttributeNames,
		ExpressionAttributeValues: in.ExpressionAttributeValues, ReturnValues: string(in.ReturnValues),
		ReturnValuesOnConditionCheckFailure: string(in.ReturnValuesOnConditionCheckFailure),
		ReturnConsumedCapacity:              string(in.ReturnConsumedCapacity),
	}, &out)
	if err != nil {
		return nil, err
	}
	return &UpdateItemOutput{Attributes: out.Attributes, ConsumedCapacity: out.ConsumedCapacity}, nil
}

// DeleteItemInput is DeleteItem's request.
type DeleteItemInput struct {
	TableName                 *string
	Key                       map[string]AttributeValue
	ConditionExpression       *string
	ExpressionAttributeNames  map[string]string
	ExpressionAttributeValues map[string]AttributeValue
	ReturnConsumedCapacity    ReturnConsumedCapacity
}

// DeleteItemOutput is DeleteItem's answer.
type DeleteItemOutput struct {
	ConsumedCapacity *ConsumedCapacity
}

// DeleteItem deletes one item.
func (c *Client) DeleteItem(ctx context.Context, in *DeleteItemInput) (*DeleteItemOutput, error) {
	var out singleOut
	err := c.call(ctx, "DeleteItem", &request{
		TableName: in.TableName, Key: in.Key,
		ConditionExpression: in.ConditionExpression, ExpressionAttributeNames: in.ExpressionAttributeNames,
		ExpressionAttributeValues: in.ExpressionAttributeValues, ReturnConsumedCapacity: string(in.ReturnConsumedCapacity),
	}, &out)
	if err != nil {
		return nil, err
	}
	return &DeleteItemOutput{ConsumedCapacity: out.ConsumedCapacity}, nil
}

// QueryInput is Query's request.
type QueryInput struct {
	TableName                 *string
	IndexName                 *string
	KeyConditionExpression    *string
	FilterExpression          *string
	ProjectionExpression      *string
	ExpressionAttributeNames  map[string]string
	ExpressionAttributeValues map[string]AttributeValue
	ScanIndexForward          *bool
	ConsistentRead            *bool
	Limit                     *int32
	ExclusiveStartKey         map[string]AttributeValue
	ReturnConsumedCapacity    ReturnConsumedCapacity
}

// QueryOutput is one page of Query's answer; LastEvaluatedKey is nil on
// the last page.
type QueryOutput struct {
	Items            []map[string]AttributeValue
	Count            int32
	ScannedCount     int32
	LastEvaluatedKey map[string]AttributeValue
	ConsumedCapacity *ConsumedCapacity
}

// Query reads one page.
func (c *Client) Query(ctx context.Context, in *QueryInput) (*QueryOutput, error) {
	var out struct {
		Items            []item
		Count            int32
		ScannedCount     int32
		LastEvaluatedKey item
		ConsumedCapacity *ConsumedCapacity
	}
	err := c.call(ctx, "Query", &request{
		TableName: in.TableName, IndexName: in.IndexName, KeyConditionExpression: in.KeyConditionExpression,
		FilterExpression: in.FilterExpression, ProjectionExpression: in.ProjectionExpression,
		ExpressionAttributeNames: in.ExpressionAttributeNames, ExpressionAttributeValues: in.ExpressionAttributeValues,
		ScanIndexForward: in.ScanIndexForward, ConsistentRead: in.ConsistentRead, Limit: in.Limit,
		ExclusiveStartKey: in.ExclusiveStartKey, ReturnConsumedCapacity: string(in.ReturnConsumedCapacity),
	}, &out)
	if err != nil {
		return nil, err
	}
	items := make([]map[string]AttributeValue, len(out.Items))
	for i, it := range out.Items {
		items[i] = it
	}
	return &QueryOutput{Items: items, Count: out.Count, ScannedCount: out.ScannedCount,
		LastEvaluatedKey: out.LastEvaluatedKey, ConsumedCapacity: out.ConsumedCapacity}, nil
}

// QueryPaginator reads a query's pages in turn, as the SDK's does: each
// page starts after the last one's LastEvaluatedKey.
type QueryPaginator struct {
	c     *Client
	in    QueryInput
	start map[string]AttributeValue
	first bool
}

// NewQueryPaginator pages through in (which it copies).
func NewQueryPaginator(c *Client, in *QueryInput) *QueryPaginator {
	return &QueryPaginator{c: c, in: *in, start: in.ExclusiveStartKey, first: true}
}

// HasMorePages reports whether NextPage has a page to read.
func (p *QueryPaginator) HasMorePages() bool { return p.first || len(p.start) > 0 }

// NextPage reads the next page.
func (p *QueryPaginator) NextPage(ctx context.Context) (*QueryOutput, error) {
	in := p.in
	in.ExclusiveStartKey = p.start
	out, err := p.c.Query(ctx, &in)
	if err != nil {
		return nil, err
	}
	p.first = false
	p.start = out.LastEvaluatedKey
	return out, nil
}

// BatchWriteItemInput is BatchWriteItem's request: up to 25 puts or
// deletes across tables.
type BatchWriteItemInput struct {
	RequestItems           map[string][]WriteRequest
	ReturnConsumedCapacity ReturnConsumedCapacity
}

// BatchWriteItemOutput is BatchWriteItem's answer: the requests DynamoDB
// did not process (to be sent again) and the capacity per table.
type BatchWriteItemOutput struct {
	UnprocessedItems map[string][]WriteRequest
	ConsumedCapacity []ConsumedCapacity
}

// BatchWriteItem sends one batch of writes.
func (c *Client) BatchWriteItem(ctx context.Context, in *BatchWriteItemInput) (*BatchWriteItemOutput, error) {
	var out struct {
		UnprocessedItems map[string][]writeRequest
		ConsumedCapacity []ConsumedCapacity
	}
	err := c.call(ctx, "BatchWriteItem", &batchWriteRequest{
		RequestItems: toWriteRequests(in.RequestItems), ReturnConsumedCapacity: string(in.ReturnConsumedCapacity),
	}, &out)
	if err != nil {
		return nil, err
	}
	var unprocessed map[string][]WriteRequest
	if len(out.UnprocessedItems) > 0 {
		unprocessed = map[string][]WriteRequest{}
		for table, ws := range out.UnprocessedItems {
			for _, w := range ws {
				var r WriteRequest
				if w.PutRequest != nil {
					r.PutRequest = &PutRequest{Item: w.PutRequest.Item}
				}
				if w.DeleteRequest != nil {
					r.DeleteRequest = &DeleteRequest{Key: w.DeleteRequest.Key}
				}
				unprocessed[table] = append(unprocessed[table], r)
			}
		}
	}
	return &BatchWriteItemOutput{UnprocessedItems: unprocessed, ConsumedCapacity: out.ConsumedCapacity}, nil
}

// BatchGetItemInput is BatchGetItem's request: up to 100 keys across tables.
type BatchGetItemInput struct {
	RequestItems           map[string]KeysAndAttributes
	ReturnConsumedCapacity ReturnConsumedCapacity
}

// BatchGetItemOutput is BatchGetItem's answer: the items found per table
// (in no particular order), the keys DynamoDB did not read (to be asked
// again) and the capacity per table.
type BatchGetItemOutput struct {
	Responses        map[string][]map[string]AttributeValue
	UnprocessedKeys  map[string]KeysAndAttributes
	ConsumedCapacity []ConsumedCapacity
}

// BatchGetItem reads one batch of keys.
func (c *Client) BatchGetItem(ctx context.Context, in *BatchGetItemInput) (*BatchGetItemOutput, error) {
	var out struct {
		Responses        map[string][]item
		UnprocessedKeys  map[string]keysAndAttributes
		ConsumedCapacity []ConsumedCapacity
	}
	req := &batchGetRequest{RequestItems: map[string]keysAndAttributes{}, ReturnConsumedCapacity: string(in.ReturnConsumedCapacity)}
	for table, ka := range in.RequestItems {
		req.RequestItems[table] = toKeysAndAttributes(ka)
	}
	if err := c.call(ctx, "BatchGetItem", req, &out); err != nil {
		return nil, err
	}
	res := &BatchGetItemOutput{Responses: map[string][]map[string]AttributeValue{}, ConsumedCapacity: out.ConsumedCapacity}
	for table, items := range out.Responses {
		for _, it := range items {
			res.Responses[table] = append(res.Responses[table], it)
		}
	}
	if len(out.UnprocessedKeys) > 0 {
		res.UnprocessedKeys = map[string]KeysAndAttributes{}
		for table, ka := range out.UnprocessedKeys {
			k := KeysAndAttributes{ConsistentRead: ka.ConsistentRead, ProjectionExpression: ka.ProjectionExpression,
				ExpressionAttributeNames: ka.ExpressionAttributeNames}
			for _, key := range ka.Keys {
				k.Keys = append(k.Keys, key)
			}
			res.UnprocessedKeys[table] = k
		}
	}
	return res, nil
}

// request is the document of the single-item operations and Query.
type request struct {
	TableName                           *string           `json:"TableName,omitempty"`
	IndexName                           *string           `json:"IndexName,omitempty"`
	Item                                item              `json:"Item,omitempty"`
	Key                                 item              `json:"Key,omitempty"`
	KeyConditionExpression              *string           `json:"KeyConditionExpression,omitempty"`
	UpdateExpression                    *string           `json:"UpdateExpression,omitempty"`
	ConditionExpression                 *string           `json:"ConditionExpression,omitempty"`
	FilterExpression                    *string           `json:"FilterExpression,omitempty"`
	ProjectionExpression                *string           `json:"ProjectionExpression,omitempty"`
	ExpressionAttributeNames            map[string]string `json:"ExpressionAttributeNames,omitempty"`
	ExpressionAttributeValues           item              `json:"ExpressionAttributeValues,omitempty"`
	ScanIndexForward                    *bool             `json:"ScanIndexForward,omitempty"`
	ConsistentRead                      *bool             `json:"ConsistentRead,omitempty"`
	Limit                               *int32            `json:"Limit,omitempty"`
	ExclusiveStartKey                   item              `json:"ExclusiveStartKey,omitempty"`
	ReturnValues                        string            `json:"ReturnValues,omitempty"`
	ReturnValuesOnConditionCheckFailure string            `json:"ReturnValuesOnConditionCheckFailure,omitempty"`
	ReturnConsumedCapacity              string            `json:"ReturnConsumedCapacity,omitempty"`
}

// singleOut is the answer of the single-item operations.
type singleOut struct {
	Item             item
	Attributes       item
	ConsumedCapacity *ConsumedCapacity
}

type batchWriteRequest struct {
	RequestItems           map[string][]writeRequest `json:"RequestItems"`
	ReturnConsumedCapacity string                    `json:"ReturnConsumedCapacity,omitempty"`
}

type writeRequest struct {
	PutRequest    *struct{ Item item } `json:"PutRequest,omitempty"`
	DeleteRequest *struct{ Key item }  `json:"DeleteRequest,omitempty"`
}

func toWriteRequests(in map[string][]WriteRequest) map[string][]writeRequest {
	out := make(map[string][]writeRequest, len(in))
	for table, ws := range in {
		for _, w := range ws {
			var r writeRequest
			if w.PutRequest != nil {
				r.PutRequest = &struct{ Item item }{Item: w.PutRequest.Item}
			}
			if w.DeleteRequest != nil {
				r.DeleteRequest = &struct{ Key item }{Key: w.DeleteRequest.Key}
			}
			out[table] = append(out[table], r)
		}
	}
	return out
}

type batchGetRequest struct {
	RequestItems           map[string]keysAndAttributes `json:"RequestItems"`
	ReturnConsumedCapacity string                       `json:"ReturnConsumedCapacity,omitempty"`
}

type keysAndAttributes struct {
	Keys                     []item            `json:"Keys"`
	ConsistentRead           *bool             `json:"ConsistentRead,omitempty"`
	ProjectionExpression     *string           `json:"ProjectionExpression,omitempty"`
	ExpressionAttributeNames map[string]string `json:"ExpressionAttributeNames,omitempty"`
}

func toKeysAndAttributes(ka KeysAndAttributes) keysAndAttributes {
	k := keysAndAttributes{ConsistentRead: ka.ConsistentRead, ProjectionExpression: ka.ProjectionExpression,
		ExpressionAttributeNames: ka.ExpressionAttributeNames, Keys: make([]item, len(ka.Keys))}
	for i, key := range ka.Keys {
		k.Keys[i] = key
	}
	return k
}
