// Package scrub is Switchboard's single place for masking secrets. A
// Scrubber masks every configured secret value plus well-known secret shapes
// (AWS key ids and labelled secret keys, bearer and basic credentials, PEM
// private keys, passwords in URLs, secret-looking key/value pairs, vendor
// tokens) as "***", keeping key names so the result stays readable. String and
// Bytes scrub free text, JSON scrubs a JSON document and keeps it valid, Cap
// bounds what is stored, and NewHandler makes a slog.Handler the logger's one
// scrubbing point. StringContext is String for text leaving Switchboard: the
// Rocket.Chat, Telegram and Nextcloud clients call it on every text meant for
// a person, and it keeps exactly the values the caller allowed with Allow
// (approval links minted for the approver). Everything written to audit,
// messages, HTTP answers or logs passes through here first. The package uses
// only the standard library.
package scrub
