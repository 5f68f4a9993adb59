// Package switchboard is the domain of Switchboard: the types every layer
// shares and the ports (interfaces) through which use cases and agent tools
// reach the servers, implemented by the adapters under shared/adapters.
//
//   - runs and chains: run context, receipts, audit entries, agent messages,
//     tasks, approvals, leases (run.go, audit.go, agentmessage.go, task.go,
//     approval.go, lease.go);
//   - tool calls: calls, envelopes, the staging decision, the typed tool
//     services, model function names (tool.go, functionname.go);
//   - the model port (model.go), the wake job and its dispatcher (wakejob.go);
//   - chat: Rocket.Chat messages, rooms and subscriptions, Telegram updates
//     and sends, with their ports (chat.go);
//   - files: Nextcloud files, shares and versions, Collabora conversion, with
//     their ports (files.go);
//   - the small error vocabulary every adapter translates into, and how a
//     remote server's answer travels inside an error (errors.go).
//
// It imports only the standard library; no AWS SDK, no net/http.
package switchboard
