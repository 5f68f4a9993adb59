package dynamo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

// tableWait bounds how long EnsureTables waits for one table to turn ACTIVE
// (dynalite with --createTableMs 0: at once; AWS: seconds).
const tableWait = 2 * time.Minute

// EnsureTables creates every table in deploy.Tables under the names getenv
// resolves, on demand billing with ALL-projected indexes, and waits until each
// is ACTIVE. A table that exists already is fine (ResourceInUseException),
// unless its key schema differs from the catalogue. TTL is not configured:
// CDK does that in AWS and dynalite has no UpdateTimeToLive.
func EnsureTables(ctx context.Context, c *dynamodb.Client, getenv func(string) string) error {
	const op = "dynamo.ensureTables"
	for _, t := range deploy.Tables {
		name := deploy.TableName(t, getenv)
		_, err := c.CreateTable(ctx, createTableInput(t, name))
		var inUse *types.ResourceInUseException
		if err != nil && !errors.As(err, &inUse) {
			return mapErr(op, name, err)
		}
		w := dynamodb.NewTableExistsWaiter(c, func(o *dynamodb.TableExistsWaiterOptions) {
			o.MinDelay, o.MaxDelay = 200*time.Millisecond, 5*time.Second
		})
		out, err := w.WaitForOutput(ctx, &dynamodb.DescribeTableInput{TableName: &name}, tableWait)
		if err != nil {
			return mapErr(op, name, fmt.Errorf("wait for table %s: %w", name, err))
		}
		if err := checkSchema(t, out.Table); err != nil {
			return switchboard.Wrap(op, switchboard.EINTERNAL, fmt.Sprintf(
				"table %s exists with a different key schema; delete it or set %s to another prefix",
				name, deploy.EnvTablePrefix), err)
		}
	}
	return nil
}

// Ping describes every table: the health check. EINTERNAL when one is
// missing, EUNAVAILABLE when one is not (yet) usable or the endpoint does
// not answer.
func Ping(ctx context.Context, c *dynamodb.Client, getenv func(string) string) error {
	const op = "dynamo.ping"
	for _, t := range deploy.Tables {
		name := deploy.TableName(t, getenv)
		out, err := c.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &name})
		if err != nil {
			return mapErr(op, name, err)
		}
		if st := out.Table.TableStatus; st != types.TableStatusActive && st != types.TableStatusUpdating {
			return switchboard.E(op, switchboard.EUNAVAILABLE,
				fmt.Sprintf("table %s is %s; try again shortly", name, st))
		}
	}
	return nil
}

// createTableInput turns a catalogue entry into a CreateTable request.
func createTableInput(t deploy.Table, name string) *dynamodb.CreateTableInput {
	var attrs []types.AttributeDefinition
	seen := map[string]bool{}
	define := func(a deploy.KeyAttr) {
		if !seen[a.Name] {
			seen[a.Name] = true
			attrs = append(attrs, types.AttributeDefinition{
				AttributeName: strPtr(a.Name), AttributeType: types.ScalarAttributeType(a.Type)})
		}
	}
	keys := func(pk, sk deploy.KeyAttr) []types.KeySchemaElement {
		define(pk)
		ks := []types.KeySchemaElement{{AttributeName: strPtr(pk.Name), KeyType: types.KeyTypeHash}}
		if sk.Name != "" {
			define(sk)
			ks = append(ks, types.KeySchemaElement{AttributeName: strPtr(sk.Name), KeyType: types.KeyTypeRange})
		}
		return ks
	}
	in := &dynamodb.CreateTableInput{
		TableName:   &name,
		BillingMode: types.BillingModePayPerRequest,
		KeySchema:   keys(t.PK, t.SK),
	}
	for _, ix := range t.Indexes {
		proj := &types.Projection{ProjectionType: types.ProjectionTypeAll}
		if attrs := ix.NonKeyAttributes(t); attrs != nil {
			proj = &types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: attrs}
		}
		in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, types.GlobalSecondaryIndex{
			IndexName:  strPtr(ix.Name),
			KeySchema:  keys(ix.PK, ix.SK),
			Projection: proj,
		})
	}
	in.AttributeDefinitions = attrs
	return in
}

// checkSchema compares an existing table's keys and index names with t.
func checkSchema(t deploy.Table, d *types.TableDescription) error {
	if d == nil {
		return errors.New("no table description")
	}
	want := []string{t.PK.Name + "/HASH"}
	if t.SK.Name != "" {
		want = append(want, t.SK.Name+"/RANGE")
	}
	var got []string
	for _, k := range d.KeySchema {
		got = append(got, *k.AttributeName+"/"+string(k.KeyType))
	}
	if !slices.Equal(got, want) {
		return fmt.Errorf("key schema %v, want %v", got, want)
	}
	for _, ix := range t.Indexes {
		if !slices.ContainsFunc(d.GlobalSecondaryIndexes, func(g types.GlobalSecondaryIndexDescription) bool {
			return g.IndexName != nil && *g.IndexName == ix.Name
		}) {
			return fmt.Errorf("index %s is missing", ix.Name)
		}
	}
	return nil
}
