package dynamo

import (
	"context"
	"errors"
	"maps"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/ddb"
	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

var (
	_ switchboard.AuditStore   = (*Store)(nil)
	_ switchboard.ReceiptStore = (*Store)(nil)
	_ switchboard.JobStore     = (*Store)(nil)
	_ switchboard.Markers      = (*Store)(nil)
)

// Store implements the domain's stores on DynamoDB. Build it once per cold
// start with New; set the optional fields before first use. It is safe for
// concurrent use.
type Store struct {
	// AuditRetention sets the TTL attribute (expiresAt) of audit items to
	// At + AuditRetention; 0 keeps them forever.
	AuditRetention time.Duration
	// ReceiptRetention does the same for receipts, from StartedAt.
	ReceiptRetention time.Duration
	// AgentMessageRetention does the same for every row of an agent
	// message (the message and its search rows), from OccurredAt.
	AgentMessageRetention time.Duration
	// Now is the clock every expiry (markers, counters, KV values, leases)
	// is compared with; nil = time.Now.
	Now func() time.Time

	c                      *ddb.Client
	audit, receipts, state string
	agentMessages          string
	tasks                  string

	mu    sync.Mutex
	stats Stats
}

// New resolves the table names from getenv (deploy.TableName) once.
func New(c *ddb.Client, getenv func(string) string) *Store {
	return &Store{
		c:        c,
		audit:    tableName("audit", getenv),
		receipts: tableName("receipts", getenv),
		state:    tableName("state", getenv),

		agentMessages: tableName("agentmessages", getenv),
		tasks:         tableName("tasks", getenv),
	}
}

// tableName resolves a catalogued table; a missing ID is a programming error.
func tableName(id string, getenv func(string) string) string {
	t, ok := deploy.TableByID(id)
	if !ok {
		panic("dynamo: table " + id + " is not in deploy.Tables")
	}
	return deploy.TableName(t, getenv)
}

func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// OpStats counts requests and the capacity DynamoDB reported for them
// (ReturnConsumedCapacity TOTAL on every request).
//
// Two gaps to keep in mind when reading the numbers: a failed request (a
// refused conditional write included) counts as a call and an error but
// carries no capacity, although AWS bills a refused conditional write one
// write unit per started KB; and dynalite 4.0.0 reports the base-table write
// only, while AWS adds the index write (so an audit or receipt write is 1 WCU
// on dynalite and 2 WCU in AWS for items under 1 KB). Query reads match AWS.
type OpStats struct {
	Calls      int64
	Errors     int64
	ReadUnits  float64
	WriteUnits float64
}

func (a *OpStats) add(b OpStats) {
	a.Calls += b.Calls
	a.Errors += b.Errors
	a.ReadUnits += b.ReadUnits
	a.WriteUnits += b.WriteUnits
}

// Stats is a snapshot of a Store's request counters (for benchmarks, health
// output and cost notes).
type Stats struct {
	Total OpStats
	Ops   map[string]OpStats // by operation, e.g. "audit.append", "receipts.chainCost"
}

// Stats returns a copy of the counters since New.
func (s *Store) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Stats{Total: s.stats.Total, Ops: maps.Clone(s.stats.Ops)}
}

// capKind says which unit a plain CapacityUnits figure is in.
type capKind int

const (
	reads capKind = iota
	writes
)

// record counts one request of op with its consumed capacity (nil on error).
func (s *Store) record(op string, kind capKind, cc *ddb.ConsumedCapacity, err error) {
	d := OpStats{Calls: 1}
	if err != nil {
		d.Errors = 1
	}
	if cc != nil {
		switch {
		case cc.ReadCapacityUnits != nil || cc.WriteCapacityUnits != nil:
			d.ReadUnits = deref(cc.ReadCapacityUnits)
			d.WriteUnits = deref(cc.WriteCapacityUnits)
		case kind == writes:
			d.WriteUnits = deref(cc.CapacityUnits)
		default:
			d.ReadUnits = deref(cc.CapacityUnits)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stats.Ops == nil {
		s.stats.Ops = make(map[string]OpStats)
	}
	s.stats.Total.add(d)
	o := s.stats.Ops[op]
	o.add(d)
	s.stats.Ops[op] = o
}

func deref(f *float64) float64 {
	if f == nil {
		return 0
	}
	return *f
}

// The consumed capacity of a possibly nil output, one function per request kind.
func putCapacity(out *ddb.PutItemOutput) *ddb.ConsumedCapacity {
	if out == nil {
		return nil
	}
	return out.ConsumedCapacity
}

func queryCapacity(out *ddb.QueryOutput) *ddb.ConsumedCapacity {
	if out == nil {
		return nil
	}
	return out.ConsumedCapacity
}

func getCapacity(out *ddb.GetItemOutput) *ddb.ConsumedCapacity {
	if out == nil {
		return nil
	}
	return out.ConsumedCapacity
}

func updateCapacity(out *ddb.UpdateItemOutput) *ddb.ConsumedCapacity {
	if out == nil {
		return nil
	}
	return out.ConsumedCapacity
}

func deleteCapacity(out *ddb.DeleteItemOutput) *ddb.ConsumedCapacity {
	if out == nil {
		return nil
	}
	return out.ConsumedCapacity
}

// condition is a condition expression with its placeholders; the zero value
// is no condition.
type condition struct {
	expr   string
	names  map[string]string // "#u" → "until", for reserved words
	values map[string]ddb.AttributeValue
}

// set fills a request's condition fields.
func (c condition) set(expr **string, names *map[string]string, values *map[string]ddb.AttributeValue) {
	if c.expr == "" {
		return
	}
	*expr = &c.expr
	*names = c.names
	*values = c.values
}

// conditionFailure is the refusal of a conditional write in err's chain, or nil.
func conditionFailure(err error) *ddb.Error {
	var e *ddb.Error
	if errors.As(err, &e) && e.Code == ddb.ConditionalCheckFailed {
		return e
	}
	return nil
}

// conditionFailed reports whether err is a refused conditional write.
func conditionFailed(err error) bool { return conditionFailure(err) != nil }

// itemKey is the key attribute map of pk/sk.
func itemKey(pk, sk string) map[string]ddb.AttributeValue {
	return map[string]ddb.AttributeValue{attrPK: strAV(pk), attrSK: strAV(sk)}
}

func strAV(s string) ddb.AttributeValue { return &ddb.AttributeValueMemberS{Value: s} }

func numAV(n int64) ddb.AttributeValue {
	return &ddb.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

// getItem reads one item with get and decodes it with decode; a missing
// item is ENOTFOUND with missing as its message.
func getItem[T any](ctx context.Context, s *Store, op, table string, key map[string]ddb.AttributeValue,
	decode func(map[string]ddb.AttributeValue) (T, error), missing string) (T, error) {
	av, err := s.get(ctx, op, table, key)
	if err != nil {
		var zero T
		return zero, err
	}
	if av == nil {
		var zero T
		return zero, switchboard.E(op, switchboard.ENOTFOUND, missing)
	}
	return decoded(op, av, decode)
}

// decoded is decode(av); an item that does not decode is EINTERNAL.
func decoded[T any](op string, av map[string]ddb.AttributeValue, decode func(map[string]ddb.AttributeValue) (T, error)) (T, error) {
	v, err := decode(av)
	if err != nil {
		return v, undecodable(op, err)
	}
	return v, nil
}

// put writes one item, counting it as op; c may be the zero condition.
func (s *Store) put(ctx context.Context, op, table string, item map[string]ddb.AttributeValue, c condition) error {
	in := &ddb.PutItemInput{
		TableName:              &table,
		Item:                   item,
		ReturnConsumedCapacity: ddb.ReturnConsumedCapacityTotal,
	}
	c.set(&in.ConditionExpression, &in.ExpressionAttributeNames, &in.ExpressionAttributeValues)
	out, err := s.c.PutItem(ctx, in)
	s.record(op, writes, putCapacity(out), err)
	return mapErr(op, table, err)
}

// putNew writes an item that must be new: when one with its key exists,
// the answer is ECONFLICT with exists as its message.
func (s *Store) putNew(ctx context.Context, op, table string, item map[string]ddb.AttributeValue, exists string) error {
	err := s.put(ctx, op, table, item, condition{expr: "attribute_not_exists(pk)"})
	if conditionFailed(err) {
		return switchboard.Wrap(op, switchboard.ECONFLICT, exists, err)
	}
	return err
}

// get reads one item with a strongly consistent read (so a write just made
// is seen), counting it as op; a missing item is nil.
func (s *Store) get(ctx context.Context, op, table string, key map[string]ddb.AttributeValue) (map[string]ddb.AttributeValue, error) {
	out, err := s.c.GetItem(ctx, &ddb.GetItemInput{
		TableName:              &table,
		Key:                    key,
		ConsistentRead:         aws.Bool(true),
		ReturnConsumedCapacity: ddb.ReturnConsumedCapacityTotal,
	})
	s.record(op, reads, getCapacity(out), err)
	if err != nil {
		return nil, mapErr(op, table, err)
	}
	if len(out.Item) == 0 {
		return nil, nil
	}
	return out.Item, nil
}

// update runs one UpdateItem, counting it as op.
func (s *Store) update(ctx context.Context, op string, in *ddb.UpdateItemInput) (*ddb.UpdateItemOutput, error) {
	in.ReturnConsumedCapacity = ddb.ReturnConsumedCapacityTotal
	out, err := s.c.UpdateItem(ctx, in)
	s.record(op, writes, updateCapacity(out), err)
	return out, mapErr(op, *in.TableName, err)
}

// del deletes one item, counting it as op; c may be the zero condition.
func (s *Store) del(ctx context.Context, op, table string, key map[string]ddb.AttributeValue, c condition) error {
	in := &ddb.DeleteItemInput{
		TableName:              &table,
		Key:                    key,
		ReturnConsumedCapacity: ddb.ReturnConsumedCapacityTotal,
	}
	c.set(&in.ConditionExpression, &in.ExpressionAttributeNames, &in.ExpressionAttributeValues)
	out, err := s.c.DeleteItem(ctx, in)
	s.record(op, writes, deleteCapacity(out), err)
	return mapErr(op, table, err)
}

// query runs in to the last page, counting every page as op, and hands
// each item to each in key order.
func (s *Store) query(ctx context.Context, op string, in *ddb.QueryInput,
	each func(map[string]ddb.AttributeValue) error) error {
	in.ReturnConsumedCapacity = ddb.ReturnConsumedCapacityTotal
	p := ddb.NewQueryPaginator(s.c, in)
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		s.record(op, reads, queryCapacity(out), err)
		if err != nil {
			return mapErr(op, *in.TableName, err)
		}
		for _, item := range out.Items {
			if err := each(item); err != nil {
				return switchboard.Wrap(op, switchboard.EINTERNAL,
					"a stored item could not be read; the operator can find details in the logs", err)
			}
		}
	}
	return nil
}

// queryItems runs query and reads each item as an I, turns it into a T with
// from and hands that to add.
func queryItems[I, T any](ctx context.Context, s *Store, op string, in *ddb.QueryInput,
	from func(I) (T, error), add func(T)) error {
	return s.query(ctx, op, in, func(av map[string]ddb.AttributeValue) error {
		var it I
		if err := ddb.UnmarshalMap(av, &it); err != nil {
			return err
		}
		v, err := from(it)
		if err != nil {
			return err
		}
		add(v)
		return nil
	})
}
