// Package nctool is the Nextcloud tool agents use: upload,
// download, list, stat, mkdir, move, delete, search, versions,
// restore_version, trash, favorite, quota, capabilities, convert, share,
// shares and unshare, each acting through the agent's nextcloud.Client (usually one
// service account for all agents) inside the agent's rootPath.
//
// Scoping. Every path argument is read relative to rootPath ("/" is
// its top) and resolved with path.Clean; anything that would climb out
// (".." left after cleaning), control and direction characters, backslashes
// and percent-escapes are refused before a request is made (FuzzScope checks
// the property "never escapes rootPath"). Answers show paths the same way,
// relative to the root, so they copy back as arguments. Share ids, tokens
// and trash items of other agents on the same account are treated as if they
// did not exist; the account-wide trash is never emptied while it holds
// anything from outside the folder.
//
// Answers. Every answer is an envelope that says what happened and
// what to do next; when Nextcloud or Collabora caused an error it carries
// http_status, endpoint (a path, no credentials) and for OCS ocs_status, and
// a requested wait comes as retryAfterSeconds. The failures users hit get
// their own handling: 423 on a file under a reports folder saves the upload
// once under name-YYYYMMDD-HHMMSS.ext (UTC) and says so; 507 says the quota
// is exceeded; 429 on share creation reports the wait and never retries; OCS
// 997 says the account needs admin rights; Collabora's 403 comes with a
// suggestion to deliver Markdown or CSV instead. Destructive bulk actions —
// trash empty and unshare by path — answer needs_confirmation with what would
// be lost until called with confirm: true. Listings of names other people
// may have written (list, search, versions, trash) come inside one
// untrusted frame.
//
// Shares. The default is a read-only share with one user. Link shares
// are refused unless allowPublicShares; staging sees them through Condition
// ("public" → approve, "public_not_allowed" → deny). A link expires
// after expireDays (default shareDefaultExpireDays, 14) counted from the UTC
// date, clamped to the server's enforced maximum with a notice; when the
// server enforces link passwords the tool generates one (crypto/rand) and
// returns it once. The answer carries url, download_url, token, share_id,
// expires, has_password, permissions and how to revoke.
//
// Cleanup deletes files under <rootPath>/reports older than
// ReportsMaxAgeDays (default 90) by mtime, or only lists them in a dry run.
package nctool
