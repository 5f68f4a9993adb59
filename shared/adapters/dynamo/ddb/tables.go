package ddb

import (
	"context"
)

// The table operations of dev mode, the tests and the health check: only
// the fields they set and read.

// TableDescription is the part of a table's description the callers read.
type TableDescription struct {
	TableName              string
	TableStatus            TableStatus
	KeySchema              []KeySchemaElement
	GlobalSecondaryIndexes []IndexDescription
}

// IndexDescription names one global secondary index.
type IndexDescription struct {
	IndexName   string
	IndexStatus IndexStatus
}

// DescribeTable describes table; a missing one is a
// *ResourceNotFoundException.
func (c *Client) DescribeTable(ctx context.Context, table string) (*TableDescription, error) {
	var out struct{ Table TableDescription }
	if err := c.call(ctx, "DescribeTable", map[string]string{"TableName": table}, &out); err != nil {
		return nil, err
	}
	return &out.Table, nil
}

// CreateTableInput is CreateTable's request, on demand billing.
type CreateTableInput struct {
	TableName              string                 `json:"TableName"`
	BillingMode            BillingMode            `json:"BillingMode,omitempty"`
	AttributeDefinitions   []AttributeDefinition  `json:"AttributeDefinitions"`
	KeySchema              []KeySchemaElement     `json:"KeySchema"`
	GlobalSecondaryIndexes []GlobalSecondaryIndex `json:"GlobalSecondaryIndexes,omitempty"`
}

// AttributeDefinition is a key attribute's name and type ("S", "N", "B").
type AttributeDefinition struct {
	AttributeName string              `json:"AttributeName"`
	AttributeType ScalarAttributeType `json:"AttributeType"`
}

// KeySchemaElement is one key attribute and its role (HASH, RANGE).
type KeySchemaElement struct {
	AttributeName string  `json:"AttributeName"`
	KeyType       KeyType `json:"KeyType"`
}

// GlobalSecondaryIndex is one index of a new table.
type GlobalSecondaryIndex struct {
	IndexName  string             `json:"IndexName"`
	KeySchema  []KeySchemaElement `json:"KeySchema"`
	Projection Projection         `json:"Projection"`
}

// Projection says which attributes an index holds.
type Projection struct {
	ProjectionType   ProjectionType `json:"ProjectionType"`
	NonKeyAttributes []string       `json:"NonKeyAttributes,omitempty"`
}

// CreateTable starts creating a table; one that exists is a
// *ResourceInUseException.
func (c *Client) CreateTable(ctx context.Context, in *CreateTableInput) error {
	var out struct{}
	return c.call(ctx, "CreateTable", in, &out)
}

// DeleteTable starts deleting a table.
func (c *Client) DeleteTable(ctx context.Context, table string) error {
	var out struct{}
	return c.call(ctx, "DeleteTable", map[string]string{"TableName": table}, &out)
}

// ListTables returns the first page of table names (up to 100).
func (c *Client) ListTables(ctx context.Context) ([]string, error) {
	var out struct{ TableNames []string }
	if err := c.call(ctx, "ListTables", struct{}{}, &out); err != nil {
		return nil, err
	}
	return out.TableNames, nil
}
