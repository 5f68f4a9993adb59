// Package approvals holds staged tool actions until a human decides: Stage stores the exact call and asks the Notifier (the router,
// Telegram first) to show it with signed Approve / Deny links; a link opens
// a confirmation page that changes nothing (GET), and only a POST with a
// valid token, or an inline button pressed by a configured approver,
// decides. An approval executes its action at most once: only the caller
// whose conditional write moved it from pending to approved runs it. Deny,
// expiry and the action's result wake the requesting agent with a follow-up
// run whose parent is the requesting run.
//
// The records and the Store port are the domain's (switchboard.Approval,
// switchboard.ApprovalStore), so the stores need not import this package;
// shared/adapters/dynamo implements the port on the state table and
// shared/adapters/memstore in memory, and storetest.RunApprovalStore is the
// contract both pass.
package approvals
