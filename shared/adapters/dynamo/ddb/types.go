package ddb

// The API's shapes the stores use besides the attribute values, named as
// the SDK's types package names them.

// ConsumedCapacity is the capacity a request used (ReturnConsumedCapacity
// TOTAL): CapacityUnits, or its read and write parts when DynamoDB gives them.
type ConsumedCapacity struct {
	TableName          *string
	CapacityUnits      *float64
	ReadCapacityUnits  *float64
	WriteCapacityUnits *float64
}

// WriteRequest is one put or delete of a BatchWriteItem.
type WriteRequest struct {
	PutRequest    *PutRequest
	DeleteRequest *DeleteRequest
}

// PutRequest writes Item.
type PutRequest struct{ Item map[string]AttributeValue }

// DeleteRequest deletes the item of Key.
type DeleteRequest struct{ Key map[string]AttributeValue }

// KeysAndAttributes are the keys a BatchGetItem reads from one table.
type KeysAndAttributes struct {
	Keys                     []map[string]AttributeValue
	ConsistentRead           *bool
	ProjectionExpression     *string
	ExpressionAttributeNames map[string]string
}

// Enumerations, with the values the stores send or read.
type (
	ReturnConsumedCapacity              string
	ReturnValue                         string
	ReturnValuesOnConditionCheckFailure string
	TableStatus                         string
	IndexStatus                         string
	KeyType                             string
	ScalarAttributeType                 string
	ProjectionType                      string
	BillingMode                         string
)

const (
	ReturnConsumedCapacityTotal               ReturnConsumedCapacity              = "TOTAL"
	ReturnValueAllNew                         ReturnValue                         = "ALL_NEW"
	ReturnValueUpdatedNew                     ReturnValue                         = "UPDATED_NEW"
	ReturnValuesOnConditionCheckFailureAllOld ReturnValuesOnConditionCheckFailure = "ALL_OLD"
	TableStatusActive                         TableStatus                         = "ACTIVE"
	TableStatusUpdating                       TableStatus                         = "UPDATING"
	KeyTypeHash                               KeyType                             = "HASH"
	KeyTypeRange                              KeyType                             = "RANGE"
	ScalarAttributeTypeS                      ScalarAttributeType                 = "S"
	ProjectionTypeAll                         ProjectionType                      = "ALL"
	ProjectionTypeInclude                     ProjectionType                      = "INCLUDE"
	BillingModePayPerRequest                  BillingMode                         = "PAY_PER_REQUEST"
)
