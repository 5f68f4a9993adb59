// Package rctool is the RocketChat tool agents use:
// send_message, reply, send_file, list_rooms, read_room, mark_read,
// download_file, react and search, each acting as the agent's own
// Rocket.Chat user through the domain's chat port (switchboard.Chat).
//
// Rooms. A room argument is a room id, a channel or group name
// ("#name" asks for a channel or group only), the counterpart's username for
// an existing direct message, or "@username", which also opens a new direct
// message (im.create) when the agent sends something. Only the explicit "@"
// opens a DM, so a mistyped channel name never silently becomes a direct
// message. Rooms are looked up in the agent's subscriptions
// (one subscriptions.get, cached for CacheTTL), then with rooms.info (public
// channels the agent has not joined); anything else is "unknown room".
//
// allowedRooms is checked by the tool itself for every action that
// names a room — sending as well as reading — against the room's id and its
// name (a DM's name is the counterpart's username); an empty list allows
// every room. list_rooms shows only allowed rooms. The staging condition
// (Condition) says "other_room" for sends outside the list; Invoke refuses
// them even when staging said auto. react and download_file take ids only
// and Rocket.Chat does not tell which room those belong to, so the server's
// own access check is the only one there.
//
// Files. send_file reads a workspace path (shared/tools/workspace.Resolve: every
// refusal rule lives there) and uploads it in two steps (rooms.media, then
// rooms.mediaConfirm) after checking maxUploadMb against the
// stored size. download_file reduces the sender's name to a bare file name
// (any "personal:"/"shared:" prefix is split off first and never chooses the
// folder, then everything up to the last "/", "\" or ":" is dropped — the
// NTFS alternate-stream lesson), refuses executable endings
// unless allowDangerousDownloads, never overwrites (a taken name becomes
// "name (2).ext"), and checks maxDownloadMb on Content-Length and again while
// streaming. The stream goes straight into the final, previously free key;
// when the transfer fails or grows too large the Put fails (S3 aborts its
// multipart upload) and the key is deleted as well, so no partial file is
// ever left for the agent to mistake for a whole one.
//
// Text others wrote. read_room and search render messages like the
// wake message — "[HH:MM] @user (messageId: …): text", then
// "File: name (type, size) — fileId: …" and "Link: url — title" lines —
// inside one untrusted frame. Continuation lines of a multi-line message are
// prefixed with "  | " so that a sender cannot forge a line that looks like
// another message or an attached file. System messages (field t: a user
// joined, left, was added …) are shown, marked "[system: …]", because they
// explain who is in a room; the wake path ignores them, the reader should not
// be surprised by them. read_room never marks a room read.
//
// Errors. Every answer is an envelope. A failed Rocket.Chat call keeps
// the client's caller-safe message, which says what to do, and adds
// http_status and endpoint (method and path, never a query, header or
// token); a 429 says how long to wait and carries retryAfterSeconds. Internal
// errors go to the log and the envelope only says that the operator can find
// details there.
package rctool
