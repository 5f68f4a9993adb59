// Package nctool is the Nextcloud tool agents use: upload,
// download, list, stat, mkdir, move, delete, search, versions,
// restore_version, trash, favorite, quota, capabilities, convert, share,
// shares and unshare, each acting through the agent's switchboard.Files (usually one
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
// their own handling: a missing folder (404 on Nextcloud 34, for a PUT and
// for the chunks of a chunked upload; 409 elsewhere) is created with one
// walk and the upload tried once more, and a file where a folder should be
// is named; 423 on a file under a reports folder saves the upload once
// under name-YYYYMMDD-HHMMSS.ext (UTC) and says so; 507 says the quota is
// exceeded; 429 on share creation (Nextcloud 34 sends no Retry-After) says
// the limit — 20 per 10 minutes — and to wait up to 10 minutes, and never
// retries; OCS 997 says the account needs admin rights; Collabora's 403
// comes with a suggestion to deliver Markdown or CSV instead. Destructive
// bulk actions — trash empty and unshare by path — answer needs_confirmation
// with what would be lost until called with confirm: true. Listings of names other people
// may have written (list, search, versions, trash) come inside one
// untrusted frame.
//
// Versions. Nextcloud 34 lists the current content among the versions;
// versions marks it (the entry with the file's mtime and size) and
// restore_version refuses it.
//
// Shares. The default is a read-only share with one user. The path is
// stat'ed first, so a missing one spends none of the server's 20 share
// creations per 10 minutes (failed ones count too). Link shares
// are refused unless allowPublicShares; staging sees them through Condition
// ("public" → approve, "public_not_allowed" → deny). A link expires
// after expireDays (default shareDefaultExpireDays, 14) counted from the UTC
// date, clamped to the server's enforced maximum with a notice; when the
// server enforces link passwords the tool generates one (crypto/rand) and
// returns it once. User and group shares expire only when the call names
// expireDays. The answer carries url, download_url, token, share_id,
// expires, has_password, permissions and how to revoke. upload answers
// file_id and link, the internal link {baseUrl}/f/{fileid}.
//
// Cleanup deletes files under <rootPath>/reports older than
// ReportsMaxAgeDays (default 90) by mtime, or only lists them in a dry run.
package nctool
