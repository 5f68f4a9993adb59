// Package ncfake is a fake Nextcloud for tests and local runs, built on a
// real WebDAV server: golang.org/x/net/webdav (in-memory file system and lock
// system) is mounted under /remote.php/dav/files/{user}/ behind HTTP Basic
// auth, and ncfake adds what Nextcloud adds around Sabre:
//
//   - properties: oc:fileid, oc:id, oc:permissions, oc:size, oc:share-types,
//     oc:favorite, nc:has-preview and the RFC 4331 quota properties, served
//     as dead properties by a FileSystem wrapper (the wrapper's files are
//     webdav.DeadPropsHolders that compute them; a client PROPPATCH of
//     oc:favorite is stored by the memory FS like any dead property, the
//     computed ones are refused with 403);
//   - OC-FileId / OC-ETag headers and 201-vs-204 on PUT;
//   - Sabre-shaped XML error bodies instead of x/net's plain text;
//   - SEARCH (a basicsearch subset: and/or/not, eq/gt/gte/lt/lte/like on
//     displayname, getcontenttype, getlastmodified, size, fileid, favorite);
//   - versions (the old content is kept on every overwrite and named after
//     its mtime, X-OC-Mtime honoured; the list includes the current content,
//     whose GET is 404, as on Nextcloud 34), the trash bin
//     (DELETE moves to it), chunked upload v2 (5 MiB minimum for every chunk
//     but the last, OC-Total-Length checked);
//   - OCS v1 and v2 (JSON only): capabilities and shares (create, list, get,
//     delete), with CSRF 412 when OCS-APIRequest is missing.
//
// Failure modes are switched on by methods: Lock (423 with Nextcloud's
// FileLocked exception), SetQuota (507), SetPasswordEnforced (403 on links
// without a password), the share-creation rate limit (20 per 10 minutes per
// user, failed creations counting; Nextcloud's bare 429 without Retry-After,
// on an injectable clock), SetAdminOnly (OCS 997
// on group shares), SetDown (503 everywhere), FailNext, FailNextChunk and FailNextAfter
// (one request answered by the proxy with a 5xx, before or after Nextcloud
// did the work).
//
// One account owns files; AddUser and AddGroup only add share recipients.
// A PUT into a missing folder answers 404 as Nextcloud does (MKCOL, MOVE
// and COPY answer 409). The contract suite in package nextcloud runs the
// same checks against this fake and a real Nextcloud; where they differed,
// this fake was changed to answer as the server does.
//
// Every request is recorded; Calls counts them by route with the same names
// as nextcloud.Client.Calls ("PUT files", "MKCOL uploads", "POST shares", …).
package ncfake
