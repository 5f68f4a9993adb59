// Package dynamo is the DynamoDB adapter: it implements the domain's
// AuditStore, ReceiptStore, JobStore, Markers, Counters and Leases (and,
// through Store.KV, the KV) on the tables that
// shared/platform/deploy catalogues, creates those tables for local runs, and builds
// the client from the config shared/adapters/awsconfig loads
// (AWS_ENDPOINT_URL* picks dynalite or LocalStack; nothing else changes
// between local and AWS).
//
// Item structs stay private to this package; keys are built by the small
// functions in keys.go and every "exactly once" is a conditional write.
// dynalite (the local DynamoDB API server) has no transactions, no
// UpdateTimeToLive and no PartiQL, so nothing here uses them.
package dynamo
