// Package nextcloud is the Nextcloud adapter: one client for WebDAV (files,
// search, versions, trash, favorites, quota, chunked upload v2) and the OCS
// API (capabilities, shares), authenticated with an app password over HTTP
// Basic.
//
// Paths are always relative to the user's root ("Reports/q3.md" and
// "/Reports/q3.md" are the same file); each segment is URL-escaped on the way
// out and unescaped on the way in. Scoping a path to an agent's rootPath
// is the tool's job, not this package's.
//
// Every failure is a *switchboard.Error whose message says what happened and
// what to do; the mapping from HTTP status, Sabre exception and OCS status
// code to the domain vocabulary lives in one function (classify). HTTPStatus,
// OCSStatus and Endpoint recover the third-party facts for a tool envelope.
//
// Wire shapes (multistatus XML, OCS JSON) stay private to this package; the
// server behaviour they rely on (read from the Nextcloud sources and
// documentation) is exercised against ncfake, a fake Nextcloud built on
// golang.org/x/net/webdav.
package nextcloud
