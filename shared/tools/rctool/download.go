package rctool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"path"
	"strings"
	"unicode"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/workspace"
)

// dangerousEndings are file endings that run code when opened on a Windows,
// macOS or Linux desktop, install software, or mount as a drive; download_file
// refuses them unless allowDangerousDownloads. Compared case-insensitively
// with the last ending of the cleaned name, so "x.pdf.exe" counts.
var dangerousEndings = map[string]bool{}

func init() {
	for _, e := range strings.Fields(`
		.exe .com .scr .pif .cpl .msc .msi .msp .mst .msix .msixbundle .appx .appxbundle .appinstaller
		.dll .sys .drv .ocx .bat .cmd .ps1 .ps1xml .ps2 .ps2xml .psc1 .psc2 .psd1 .psm1 .pssc .cdxml
		.vb .vbs .vbe .js .jse .mjs .cjs .wsf .wsh .ws .wsc .sct .hta .lnk .url .scf .reg .inf .chm .gadget
		.application .xbap .jar .jnlp .sh .bash .zsh .csh .ksh .fish .command .tool .run .app .pkg .dmg
		.apk .xapk .ipa .deb .rpm .appimage .snap .iso .img .vhd .vhdx .pyw .action .workflow .library-ms .settingcontent-ms`) {
		dangerousEndings[e] = true
	}
}

// dangerous reports whether name ends in an executable ending.
func dangerous(name string) bool {
	return dangerousEndings[strings.ToLower(path.Ext(name))]
}

// downloadFile saves a file someone sent into the workspace.
func (c *invocation) downloadFile() sb.Envelope {
	var a downloadArgs
	if err := c.decodeArgs(&a); err != nil {
		return c.fail(err)
	}
	if a.FileID == nil {
		return c.failMsg(sb.EINVALID, "missing argument \"fileId\"; take it from the \"fileId:\" shown next to the file in read_room or the wake message")
	}
	fileID, err := c.id("fileId", a.FileID, true)
	if err != nil {
		return c.fail(err)
	}
	if a.FileName == nil {
		return c.failMsg(sb.EINVALID, "missing argument \"fileName\"; give the file's name as shown next to it, e.g. report.csv")
	}
	raw, err := c.text("fileName", a.FileName)
	if err != nil {
		return c.fail(err)
	}
	name := incomingName(raw)
	if name == "" {
		return c.failMsg(sb.EINVALID, "fileName %s has no file name left once its folder part is removed; give the name shown next to the file, e.g. report.csv", quote(raw))
	}
	if !c.agent.AllowDangerousDownloads && dangerous(name) {
		return c.failMsg(sb.EFORBIDDEN, "%s has the executable ending %s, which this agent may not download (RocketChat.allowDangerousDownloads is off); ask the sender for another format, such as a PDF or a ZIP of documents",
			quote(name), path.Ext(name))
	}
	target := workspace.PrefixPersonal
	if a.Target != nil && strings.TrimSpace(*a.Target) != "" {
		target = *a.Target
	}
	folder, err := c.folderRef(target)
	if err != nil {
		return c.fail(err)
	}
	if c.preflight {
		return checked
	}
	key, ref, renamed, err := c.freeKey(folder, name)
	if err != nil {
		return c.fail(err)
	}

	limitMB := c.agent.MaxDownloadMB
	if limitMB <= 0 {
		limitMB = DefaultMaxDownloadMB
	}
	limit := int64(limitMB) << 20
	tooLarge := func(size string) sb.Envelope {
		return c.failMsg(sb.EINVALID, "the file %s is %s, more than this agent's download limit of %d MB (RocketChat.maxDownloadMb); nothing was saved. Ask the sender for a smaller file, or the operator to raise the limit",
			quote(name), size, limitMB)
	}

	fs, err := c.agent.Client.Download(c.ctx, fileID, name)
	if err != nil {
		return c.fail(err)
	}
	defer fs.Body.Close()
	if fs.Size > limit { // Content-Length, when the server sent one
		return tooLarge(sb.HumanSize(fs.Size))
	}
	ctype := contentType(fs.ContentType, name)
	lr := &limitedReader{r: fs.Body, max: limit}
	size := fs.Size
	if size < 0 {
		size = -1
	}
	putErr := c.t.blobs.Put(c.ctx, key, lr, size, ctype)
	if putErr != nil || lr.err != nil {
		// The key was free before: deleting it cannot remove anything but
		// what this transfer wrote (S3 has aborted a multipart upload
		// already; another store might have kept a part).
		if derr := c.t.blobs.Delete(context.WithoutCancel(c.ctx), key); derr != nil {
			c.t.log.ErrorContext(c.ctx, "rocketchat tool: could not remove a failed download", "agent", c.call.AgentID,
				"path", ref, "runId", c.call.Run.RunID, "err", derr.Error())
		}
		switch {
		case errors.Is(lr.err, errTooLarge):
			return tooLarge(fmt.Sprintf("larger than %d MB (the server did not announce its size)", limitMB))
		case lr.err != nil:
			c.t.log.WarnContext(c.ctx, "rocketchat tool: download broke off", "agent", c.call.AgentID, "fileId", fileID,
				"bytes", lr.n, "runId", c.call.Run.RunID, "err", lr.err.Error())
			return c.fail(sb.E(c.op, sb.EUNAVAILABLE, fmt.Sprintf(
				"the download of %s broke off after %s; nothing was saved, try again", quote(name), sb.HumanSize(lr.n))))
		}
		return c.storeFailure("save", ref, putErr)
	}
	data := map[string]any{
		"path":        ref,
		"size":        lr.n,
		"contentType": ctype,
		"fileId":      fileID,
		"fileName":    path.Base(key),
	}
	if renamed {
		data["note"] = fmt.Sprintf("a file named %s already existed there, so this one was saved as %s", name, path.Base(key))
	}
	return sb.OK(data)
}

// incomingName reduces a sender's file name to a bare name. A
// "personal:"/"shared:" prefix is split off first — it never picks the
// folder, only target does — then everything up to the last "/", "\" or ":"
// goes (a colon would start an NTFS alternate data stream);
// control and bidi characters are dropped (they disguise endings), and so
// are trailing dots and spaces, which Windows ignores ("x.exe." runs as
// x.exe). "" when nothing is left.
func incomingName(raw string) string {
	s := strings.TrimSpace(raw)
	for _, p := range []string{workspace.PrefixPersonal, workspace.PrefixShared} {
		if len(s) >= len(p) && strings.EqualFold(s[:len(p)], p) {
			s = s[len(p):]
			break
		}
	}
	if i := strings.LastIndexAny(s, `/\:`); i >= 0 {
		s = s[i+1:]
	}
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || workspace.IsBidiControl(r) || unicode.In(r, unicode.Zl, unicode.Zp) {
			return -1
		}
		return r
	}, s)
	s = strings.TrimRight(strings.TrimSpace(s), ". ")
	if s == "" || s == "." || s == ".." {
		return ""
	}
	return s
}

// folderRef checks target, which names only a folder: "personal:",
// "shared:", "shared:reports", a bare folder (personal). It returns the
// folder as a path prefix that a file name can follow.
func (c *invocation) folderRef(target string) (string, error) {
	target = strings.TrimSpace(target)
	if _, err := workspace.ResolvePrefix(c.call.AgentID, target); err != nil {
		return "", err
	}
	if !strings.HasPrefix(target, workspace.PrefixPersonal) && !strings.HasPrefix(target, workspace.PrefixShared) {
		target = workspace.PrefixPersonal + target
	}
	if !strings.HasSuffix(target, ":") && !strings.HasSuffix(target, "/") {
		target += "/"
	}
	return target, nil
}

// maxRenames bounds the search for a free name.
const maxRenames = 50

// freeKey finds the first free key for name in folder: name, then
// "stem (2).ext", "stem (3).ext" … A download never replaces a file.
func (c *invocation) freeKey(folder, name string) (key, ref string, renamed bool, err error) {
	ext := path.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	if stem == "" { // ".profile": the whole name is the stem
		stem, ext = name, ""
	}
	for i := 1; i <= maxRenames; i++ {
		cand := name
		if i > 1 {
			cand = fmt.Sprintf("%s (%d)%s", stem, i, ext)
		}
		key, err = workspace.Resolve(c.call.AgentID, folder+cand)
		if err != nil {
			return "", "", false, err
		}
		blobs, err := c.t.blobs.List(c.ctx, key, 1)
		if err != nil {
			return "", "", false, c.storeError("check", folder+cand, err)
		}
		if len(blobs) == 0 || blobs[0].Key != key {
			return key, workspace.DisplayRef(c.call.AgentID, key), i > 1, nil
		}
	}
	return "", "", false, sb.E(c.op, sb.ECONFLICT, fmt.Sprintf(
		"%s and %d numbered copies of it already exist in %s; give another fileName or target folder", quote(name), maxRenames-1, folder))
}

// storeError is storeFailure as an error, for helpers that return one.
func (c *invocation) storeError(verb, ref string, err error) error {
	c.t.log.ErrorContext(c.ctx, "rocketchat tool: workspace store failed", "action", c.call.Action, "agent", c.call.AgentID,
		"path", ref, "runId", c.call.Run.RunID, "err", err.Error())
	if sb.ErrorCode(err) == sb.EUNAVAILABLE || errors.Is(err, context.DeadlineExceeded) {
		return sb.E(c.op, sb.EUNAVAILABLE, fmt.Sprintf("could not %s %s: the workspace storage is unavailable right now; try again in a minute", verb, ref))
	}
	return sb.E(c.op, sb.EINTERNAL, fmt.Sprintf("could not %s %s because of an internal error; the operator can find details in the logs", verb, ref))
}

// contentType is the server's media type (parameters dropped), else a
// guess from the name, else application/octet-stream.
func contentType(header, name string) string {
	if mt, _, err := mime.ParseMediaType(header); err == nil && mt != "" {
		return mt
	}
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		if mt, _, err := mime.ParseMediaType(t); err == nil {
			return mt
		}
	}
	return "application/octet-stream"
}

var errTooLarge = errors.New("download larger than the limit")

// limitedReader passes at most max bytes; the byte after them fails the
// read with errTooLarge (the size is checked while streaming, since
// Content-Length may be missing). Any read error is kept and handed on
// wrapped, never as io.ErrUnexpectedEOF, which a store reading with
// io.ReadFull would take for a short but complete body.
type limitedReader struct {
	r   io.Reader
	max int64
	n   int64
	err error
}

type transferError struct{ err error }

func (e *transferError) Error() string { return "download broke off: " + e.err.Error() }
func (e *transferError) Unwrap() error { return e.err }

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	n, err := l.r.Read(p)
	l.n += int64(n)
	if l.n > l.max {
		l.err = errTooLarge
		return 0, l.err
	}
	switch {
	case err == nil || err == io.EOF:
		return n, err
	default:
		l.err = &transferError{err: err}
		return n, l.err
	}
}
