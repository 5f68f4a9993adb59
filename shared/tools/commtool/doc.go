// Package commtool is the AgentCommAnalysis tool: a read-only view of the
// messages agents send each other, for an agent the operator chose to look
// for where collaboration sticks. Actions: list_pairs (who talks with whom,
// how often, since when), stats (delegations that end in a result or
// fizzle, chain depth against failure rate, questions a pair repeats, cost
// per chain from the run receipts, failed/timeout/denied hotspots by pair),
// read_conversation (one pair, paged), chain (one run chain end to end with
// its runs, tool calls and costs) and search (the store's word index).
//
// Three safeguards, because the caller reads other runs' words:
//
//   - Metrics by default. read_conversation and chain answer message
//     metadata (who, when, channel, status, length) unless raw is true;
//     stats never answers text, only counts and message ids.
//   - Raw text is hard-capped, per message and per answer, and framed as
//     untrusted content (shared/platform/untrusted), one frame per answer;
//     search snippets too. Continuation lines are prefixed "  | " so that
//     a message cannot forge what looks like another message's header.
//   - Read-only. The tool holds only readers (sb.AgentMessageReader and
//     the read halves of the receipt and audit stores); no action writes.
//
// Bounded work. Every read is an index read of the message store (pair,
// agent, run chain, calendar month, word) — never a scan. list_pairs and
// stats read at most MaxAnalysed messages, newest first, of a time range
// of at most 366 days (default the last 30); when the range holds more,
// the answer says so (complete false) and from when on it is covered.
// stats asks the receipts for at most MaxCostedChains chains.
package commtool
