package dynamo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/ddb"
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
func EnsureTables(ctx context.Context, c *ddb.Client, getenv func(string) string) error {
	const op = "dynamo.ensureTables"
	for _, t := range deploy.Tables {
		name := deploy.TableName(t, getenv)
		err := c.CreateTable(ctx, createTableInput(t, name))
		if err != nil && ddb.Code(err) != ddb.ResourceInUse {
			return mapErr(op, name, err)
		}
		d, err := waitActive(ctx, c, name)
		if err != nil {
			return mapErr(op, name, fmt.Errorf("wait for table %s: %w", name, err))
		}
		if err := checkSchema(t, d); err != nil {
			return switchboard.Wrap(op, switchboard.EINTERNAL, fmt.Sprintf(
				"table %s exists with a different key schema; delete it or set %s to another prefix",
				name, deploy.EnvTablePrefix), err)
		}
	}
	return nil
}

// waitActive describes the table until it is ACTIVE, at most tableWait:
// first after 200 ms, then twice as long each time up to 5 s, as the SDK's
// waiter was set. A table not found yet is waited for too.
func waitActive(ctx context.Context, c *ddb.Client, name string) (*ddb.TableDescription, error) {
	ctx, cancel := context.WithTimeout(ctx, tableWait)
	defer cancel()
	for wait := 200 * time.Millisecond; ; wait = min(2*wait, 5*time.Second) {
		d, err := c.DescribeTable(ctx, name)
		switch {
		case err == nil && d.TableStatus == ddb.TableStatusActive:
			return d, nil
		case err != nil && ddb.Code(err) != ddb.ResourceNotFound:
			return nil, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("not active within %v: %w", tableWait, ctx.Err())
		case <-t.C:
		}
	}
}

// Ping describes every table: the health check. EINTERNAL when one is
// missing, EUNAVAILABLE when one is not (yet) usable or the endpoint does
// not answer.
func Ping(ctx context.Context, c *ddb.Client, getenv func(string) string) error {
	const op = "dynamo.ping"
	for _, t := range deploy.Tables {
		name := deploy.TableName(t, getenv)
		d, err := c.DescribeTable(ctx, name)
		if err != nil {
			return mapErr(op, name, err)
		}
		if st := d.TableStatus; st != ddb.TableStatusActive && st != ddb.TableStatusUpdating {
			return switchboard.E(op, switchboard.EUNAVAILABLE,
				fmt.Sprintf("table %s is %s; try again shortly", name, st))
		}
	}
	return nil
}

// createTableInput turns a catalogue entry into a CreateTable request.
func createTableInput(t deploy.Table, name string) *ddb.CreateTableInput {
	var attrs []ddb.AttributeDefinition
	seen := map[string]bool{}
	define := func(a deploy.KeyAttr) {
		if !seen[a.Name] {
			seen[a.Name] = true
			attrs = append(attrs, ddb.AttributeDefinition{AttributeName: a.Name, AttributeType: ddb.ScalarAttributeType(a.Type)})
		}
	}
	keys := func(pk, sk deploy.KeyAttr) []ddb.KeySchemaElement {
		define(pk)
		ks := []ddb.KeySchemaElement{{AttributeName: pk.Name, KeyType: ddb.KeyTypeHash}}
		if sk.Name != "" {
			define(sk)
			ks = append(ks, ddb.KeySchemaElement{AttributeName: sk.Name, KeyType: ddb.KeyTypeRange})
		}
		return ks
	}
	in := &ddb.CreateTableInput{
		TableName:   name,
		BillingMode: ddb.BillingModePayPerRequest,
		KeySchema:   keys(t.PK, t.SK),
	}
	for _, ix := range t.Indexes {
		proj := ddb.Projection{ProjectionType: ddb.ProjectionTypeAll}
		if attrs := ix.NonKeyAttributes(t); attrs != nil {
			proj = ddb.Projection{ProjectionType: ddb.ProjectionTypeInclude, NonKeyAttributes: attrs}
		}
		in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, ddb.GlobalSecondaryIndex{
			IndexName:  ix.Name,
			KeySchema:  keys(ix.PK, ix.SK),
			Projection: proj,
		})
	}
	in.AttributeDefinitions = attrs
	return in
}

// checkSchema compares an existing table's keys and index names with t.
func checkSchema(t deploy.Table, d *ddb.TableDescription) error {
	if d == nil {
		return errors.New("no table description")
	}
	want := []string{t.PK.Name + "/HASH"}
	if t.SK.Name != "" {
		want = append(want, t.SK.Name+"/RANGE")
	}
	var got []string
	for _, k := range d.KeySchema {
		got = append(got, k.AttributeName+"/"+string(k.KeyType))
	}
	if !slices.Equal(got, want) {
		return fmt.Errorf("key schema %v, want %v", got, want)
	}
	for _, ix := range t.Indexes {
		if !slices.ContainsFunc(d.GlobalSecondaryIndexes, func(g ddb.IndexDescription) bool { return g.IndexName == ix.Name }) {
			return fmt.Errorf("index %s is missing", ix.Name)
		}
	}
	return nil
}
