// Package switchboard is the domain of Switchboard: run context, audit entries,
// receipts, tool calls and their envelopes, the staging decision, and the small
// error vocabulary every adapter translates into. It imports no AWS SDK and no
// net/http; adapters live beside it under shared/.
package switchboard
