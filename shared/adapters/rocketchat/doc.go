// Package rocketchat is Switchboard's Rocket.Chat REST client: one agent's
// view of a Rocket.Chat 8.x server, acting as that agent's own user with a
// personal access token. Every request carries X-User-Id and
// X-Auth-Token; the token never appears in an error, a log line or String().
//
// Wire shapes stay private to this package (wire.go); methods return the
// domain's chat types (switchboard.ChatMessage, ChatSubscription, ChatRoom,
// ChatSent, ChatDownload), filled by the converters there, and Client
// implements the domain's chat ports (switchboard.Chat).
//
// Errors. Every failure is a *switchboard.Error built in one function
// (failure, errors.go). Its Message names the endpoint ("Rocket.Chat POST
// /api/v1/chat.postMessage: …", never the query string or a header) and says
// what to do:
//
//   - 401 → EUNAUTHORIZED (userId/authToken wrong, or the token was revoked)
//   - 403 → EFORBIDDEN
//   - 400 invalid-channel / error-room-not-found (and the other "no such
//     room" codes) → ENOTFOUND "unknown room …"; other 400 → EINVALID with
//     the server's reason
//   - 404 → ENOTFOUND
//   - 429 → ERATELIMITED with RetryAfter from X-RateLimit-Reset, which
//     Rocket.Chat sends in epoch milliseconds (it sends no Retry-After)
//   - 5xx, timeouts, refused connections → EUNAVAILABLE
//
// Retries. The client never retries and never sleeps: a failed call returns
// at once, and the caller (the poll job, a tool, a state machine) decides
// whether and when to try again, using RetryAfter. The only second
// request a method makes on its own is RoomInfo's lookup by name after a
// lookup by id found nothing, which is a different question, not a retry.
// (Go's http.Transport may resend an idempotent GET once when a kept-alive
// connection was closed before any answer; that is the transport's rule.)
//
// Calls counts requests per endpoint for measurements ("a quiet poll tick
// costs one Rocket.Chat call").
//
// Behaviour that depends on how a real server acts was read from the
// Rocket.Chat sources or measured against a live Rocket.Chat 8.7; the
// comments say which facts the code relies on, and the fake server in
// rcfake reproduces the same facts for tests.
package rocketchat
