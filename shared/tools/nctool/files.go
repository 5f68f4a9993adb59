package nctool

import (
	"fmt"
	"io"
	"math"
	"mime"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/workspace"
)

// Listing bounds.
const (
	DefaultListLimit   = 200
	MaxListLimit       = 1000
	DefaultSearchLimit = 50
	MaxSearchLimit     = 500
	MaxListDepth       = 10
)

// source opens the bytes to upload; called again for each attempt, since
// a rejected PUT has consumed the previous stream.
type source func() (r io.ReadCloser, size int64, err error)

// putOutcome is what putRemote did.
type putOutcome struct {
	res       sb.FilePut
	path      string // where the file landed
	renamed   bool   // 423 under reports: saved under a timestamped name
	madeDirs  bool   // parent folders were created
	requested string
}

// putRemote uploads to dst: one PUT when the folder exists. When the
// folder is missing it creates the folders (one MkdirAll walk) and tries
// once more: Nextcloud 34 answers a PUT into a missing folder — and the
// chunk PUTs of a chunked upload into one — with 404, RFC 4918 servers (and
// Nextcloud's MKCOL and MOVE) with 409. On 423 (the file is open in
// Collabora) below a reports folder it saves once under a timestamped name.
// It never loops.
func (c *invocation) putRemote(dst string, open source, contentType string) (putOutcome, error) {
	out := putOutcome{path: dst, requested: dst}
	attempt := func(p string) (sb.FilePut, error) {
		r, size, err := open()
		if err != nil {
			return sb.FilePut{}, err
		}
		defer r.Close()
		return c.nc.Put(c.ctx, p, r, size, contentType)
	}
	res, err := attempt(dst)
	if s := status(err); s == 404 || s == 409 {
		if err := c.nc.MkdirAll(c.ctx, path.Dir(dst)); err != nil {
			if status(err) == 409 {
				// MKCOL still finds no parent after creating the parents: one
				// of them is a file (MKCOL on a file answers 405, which the
				// walk takes for an existing folder).
				return out, c.fileInTheWay(dst, err)
			}
			return out, err
		}
		out.madeDirs = true
		res, err = attempt(dst)
		switch status(err) {
		case 404: // the folders exist now, so a file must be where one of them should be
			return out, c.fileInTheWay(dst, err)
		case 409:
			return out, c.isAFolder(dst, err)
		}
	}
	if err != nil && chunkedFinish(err) {
		switch status(err) {
		case 415: // "The destination node is not a collection": the parent is a file
			return out, c.fileInTheWay(dst, err)
		case 400: // "The given destination … is a directory", or a chunk problem
			if e, serr := c.nc.Stat(c.ctx, dst); serr == nil && e.IsDir {
				return out, c.isAFolder(dst, err)
			}
		}
	}
	if status(err) == 423 && c.scope.underReports(dst) {
		alt := timestamped(dst, c.t.now())
		res, err = attempt(alt)
		if err != nil {
			return out, sb.Wrap(c.op, sb.ErrorCode(err), fmt.Sprintf(
				"%s is locked (open in Collabora?), and saving under the timestamped name %s failed too: %s",
				c.scope.show(dst), c.scope.show(alt), sb.ErrorMessage(err)), err)
		}
		out.path, out.renamed = alt, true
	}
	out.res = res
	return out, err
}

// chunkedFinish reports whether err is the answer to the last step of a
// chunked upload (MOVE of uploads/…/.file onto the destination), where
// Nextcloud 34 reports a file in the way of the folder (415) and a folder
// in the way of the file (400).
func chunkedFinish(err error) bool {
	ep := sb.Endpoint(err)
	return strings.Contains(ep, "/remote.php/dav/uploads/") && strings.HasSuffix(ep, "/.file")
}

func (c *invocation) isAFolder(dst string, err error) error {
	return sb.Wrap(c.op, sb.ECONFLICT, fmt.Sprintf(
		"%s is a folder (or conflicts with one); to put the file into it, end the path with / (as in %s/), or choose another file name",
		c.scope.show(dst), c.scope.show(dst)), err)
}

// fileInTheWay is the error for an upload whose folders exist but one of
// them is a file. It names the file when a few PROPFINDs up the path find
// it (only on this failure; the walk stops at the first item that exists).
func (c *invocation) fileInTheWay(dst string, err error) error {
	for p := path.Dir(dst); c.scope.contains(p); p = path.Dir(p) {
		e, serr := c.nc.Stat(c.ctx, p)
		if serr == nil {
			if !e.IsDir {
				return sb.Wrap(c.op, sb.ECONFLICT, fmt.Sprintf(
					"%s is a file, but %s needs a folder of that name; choose another %s, or move or rename %s first (Nextcloud.move)",
					c.scope.show(p), c.scope.show(dst), c.destArg(), c.scope.show(p)), err)
			}
			break
		}
		// Below a file Nextcloud answers 404 (other WebDAV servers 405 or
		// 409): look further up. Anything else ends the search.
		if s := status(serr); (s != 404 && s != 405 && s != 409) || p == "/" {
			break
		}
	}
	return sb.Wrap(c.op, sb.ECONFLICT, fmt.Sprintf(
		"a folder on the way to %s cannot be created because a file has its name; list the folders along the path to find that file, then choose another %s or move the file away (Nextcloud.move)",
		c.scope.show(dst), c.destArg()), err)
}

// destArg names the argument that chose where putRemote writes.
func (c *invocation) destArg() string {
	if c.call.Action == "convert" {
		return "target"
	}
	return "remotePath"
}

// timestamped inserts -YYYYMMDD-HHMMSS (UTC) before the extension:
// reports/q3.md → reports/q3-20260501-120000.md.
func timestamped(p string, now time.Time) string {
	dir, name := path.Split(p)
	ext := path.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	if stem == "" { // ".env": the whole name is the stem
		stem, ext = name, ""
	}
	return dir + stem + "-" + now.UTC().Format("20060102-150405") + ext
}

func contentTypeOf(name string) string {
	if t := mime.TypeByExtension(strings.ToLower(path.Ext(name))); t != "" {
		return t
	}
	return "application/octet-stream"
}

// uploadDone is what an upload did.
type uploadDone struct {
	ref    string // the workspace file
	out    putOutcome
	fileID int64
}

// upload streams a workspace file to Nextcloud.
func (c *invocation) upload() sb.Envelope {
	up, err := c.doUpload()
	switch {
	case err != nil:
		return c.envelope(err)
	case c.preflight:
		return checked
	}
	return sb.OK(c.uploadData(up))
}

// uploaded is the typed result of an upload.
func (c *invocation) uploaded(up uploadDone) sb.FileUploaded {
	res := sb.FileUploaded{Path: c.scope.show(up.out.path), FileID: up.fileID, Link: c.internalLink(up.fileID)}
	if up.out.renamed {
		res.RequestedPath = c.scope.show(up.out.requested)
	}
	return res
}

// doUpload is upload's work; in a preflight it stops after the checks.
func (c *invocation) doUpload() (uploadDone, error) {
	var a uploadArgs
	if err := c.decodeArgs(&a); err != nil {
		return uploadDone{}, err
	}
	ref, err := c.text("localPath", a.LocalPath)
	if err != nil {
		return uploadDone{}, err
	}
	key, err := workspace.Resolve(c.call.AgentID, ref)
	if err != nil {
		return uploadDone{}, err
	}
	name := path.Base(key)
	remote := "/" + name
	if a.RemotePath != nil {
		remote = *a.RemotePath
		switch {
		case strings.TrimSpace(remote) == "":
			remote = name
		case strings.HasSuffix(remote, "/"):
			remote += name // a folder: keep the workspace file's name
		}
	}
	dst, err := c.scope.resolve("remotePath", remote)
	if err != nil {
		return uploadDone{}, err
	}
	if err := c.notRoot("remotePath", dst, "give a file path such as reports/"+name); err != nil {
		return uploadDone{}, err
	}
	if c.preflight {
		return uploadDone{}, nil
	}
	if !boolOr(a.Overwrite, true) {
		switch _, err := c.nc.Stat(c.ctx, dst); {
		case err == nil:
			return uploadDone{}, c.refuse(sb.ECONFLICT, "%s exists already and overwrite is false; choose another remotePath, or pass overwrite: true (Nextcloud keeps the old content as a version)", c.scope.show(dst))
		case sb.ErrorCode(err) != sb.ENOTFOUND:
			return uploadDone{}, c.failure("cannot check "+c.scope.show(dst), err)
		}
	}
	open := func() (io.ReadCloser, int64, error) {
		r, info, err := c.t.blobs.Get(c.ctx, key)
		if err != nil {
			if sb.ErrorCode(err) == sb.ENOTFOUND {
				return nil, 0, sb.Wrap(c.op, sb.ENOTFOUND, fmt.Sprintf("there is no file %s in your workspace; Workspace.list shows your files", quote(ref)), err)
			}
			return nil, 0, err
		}
		return r, info.Size, nil
	}
	out, err := c.putRemote(dst, open, contentTypeOf(name))
	if err != nil {
		what := "cannot upload " + quote(ref) + " to " + c.scope.show(dst)
		if status(err) == 423 && !c.scope.underReports(dst) {
			return uploadDone{}, c.failure(what, sb.Wrap(c.op, sb.ECONFLICT, "the file is open or locked (probably in Collabora); close it there and try again, or upload under another remotePath (for example with a date in the name)", err))
		}
		return uploadDone{}, c.failure(what, err)
	}
	fileID := out.res.FileID
	if fileID == 0 { // no OC-FileId (a proxy dropped it): the link needs the id
		if e, err := c.nc.Stat(c.ctx, out.path); err == nil {
			fileID = e.FileID
		}
	}
	return uploadDone{ref: ref, out: out, fileID: fileID}, nil
}

// uploadData is upload's answer to the model.
func (c *invocation) uploadData(up uploadDone) map[string]any {
	ref, out, fileID := up.ref, up.out, up.fileID
	data := map[string]any{
		"path":      c.scope.show(out.path),
		"localPath": ref,
		"created":   out.res.Created,
		"fileid":    fileID,
		"file_id":   fileID,
		"etag":      out.res.ETag,
		"chunked":   out.res.Chunked,
	}
	if link := c.internalLink(fileID); link != "" {
		data["link"] = link
	}
	var notes []string
	if out.renamed {
		data["requested_path"] = c.scope.show(out.requested)
		notes = append(notes, fmt.Sprintf("%s is locked (open in Collabora?), so the report was saved as %s instead; tell the human the new name",
			c.scope.show(out.requested), c.scope.show(out.path)))
	}
	if out.madeDirs {
		notes = append(notes, "created the missing folders")
	}
	if !out.res.Created {
		notes = append(notes, "replaced the existing file; Nextcloud kept the earlier content as a version (Nextcloud.versions lists it)")
	}
	data["message"] = uploadMessage(c.scope.show(out.path), notes)
	return data
}

// internalLink is Nextcloud's link to a file by id, {BaseURL}/f/{fileid}:
// Nextcloud redirects a logged-in person who can see the file into the
// Files app with it open; it gives no access to anyone else. "" without
// BaseURL or id.
func (c *invocation) internalLink(fileID int64) string {
	if c.agent.BaseURL == "" || fileID == 0 {
		return ""
	}
	return strings.TrimRight(c.agent.BaseURL, "/") + "/f/" + strconv.FormatInt(fileID, 10)
}

func uploadMessage(p string, notes []string) string {
	msg := "uploaded to " + p
	if len(notes) > 0 {
		msg += "; " + strings.Join(notes, "; ")
	}
	return msg + ". Nextcloud.share makes a link or shares it with a user."
}

// download streams a Nextcloud file into the agent's workspace.
func (c *invocation) download() sb.Envelope {
	var a downloadArgs
	if err := c.decodeArgs(&a); err != nil {
		return c.bad(err)
	}
	src, err := c.remote("path", a.Path)
	if err != nil {
		return c.bad(err)
	}
	if err := c.notRoot("path", src, "download takes one file; list the folder to pick one"); err != nil {
		return c.bad(err)
	}
	name := path.Base(src)
	ref := workspace.PrefixPersonal + name
	if a.LocalPath != nil {
		ref = *a.LocalPath
		if ref == workspace.PrefixPersonal || ref == workspace.PrefixShared || strings.HasSuffix(ref, "/") || ref == "" {
			ref += name // a folder: keep the Nextcloud file's name
		}
	}
	key, err := workspace.Resolve(c.call.AgentID, ref)
	if err != nil {
		if a.LocalPath == nil || strings.HasSuffix(ref, name) {
			return c.bad(sb.Wrap(c.op, sb.EINVALID, fmt.Sprintf("the file name %s cannot be a workspace name (%s); pass localPath with a name of your own", quote(name), sb.ErrorMessage(err)), err))
		}
		return c.bad(err)
	}
	if c.preflight {
		return checked
	}
	if !boolOr(a.Overwrite, false) {
		list, err := c.t.blobs.List(c.ctx, key, 1)
		if err != nil {
			return c.fail("cannot check the workspace", err)
		}
		if len(list) > 0 && list[0].Key == key {
			return c.failMsg(sb.ECONFLICT, "%s exists in your workspace already; pass another localPath, or overwrite: true to replace it", quote(ref))
		}
	}
	dl, err := c.nc.Get(c.ctx, src)
	if err != nil {
		if status(err) == 405 {
			return c.fail("cannot download "+c.scope.show(src), sb.Wrap(c.op, sb.EINVALID, "it is a folder; download takes one file (Nextcloud.list shows what is inside)", err))
		}
		return c.fail("cannot download "+c.scope.show(src), err)
	}
	defer dl.Body.Close()
	ctype := dl.ContentType
	if ctype == "" {
		ctype = contentTypeOf(name)
	}
	if err := c.t.blobs.Put(c.ctx, key, dl.Body, dl.Size, ctype); err != nil {
		// A failed transfer must not leave a partial file the agent could
		// mistake for the whole one.
		_ = c.t.blobs.Delete(c.ctx, key)
		return c.fail("cannot download "+c.scope.show(src)+" into "+quote(ref), err)
	}
	data := map[string]any{
		"path":        c.scope.show(src),
		"localPath":   ref,
		"contentType": ctype,
		"message":     fmt.Sprintf("downloaded %s into your workspace as %s", c.scope.show(src), ref),
	}
	if dl.Size >= 0 {
		data["size"] = dl.Size
	}
	if !dl.Modified.IsZero() {
		data["modified"] = utcSecond(dl.Modified)
	}
	return sb.OK(data)
}

// list shows a folder: depth 0 the item, 1 its children (one PROPFIND),
// deeper levels through one SEARCH scoped to the folder (PROPFIND with
// Depth: infinity is usually disabled on Nextcloud).
func (c *invocation) list() sb.Envelope {
	var a listArgs
	if err := c.decodeArgs(&a); err != nil {
		return c.bad(err)
	}
	dir, err := c.remoteOr("path", a.Path)
	if err != nil {
		return c.bad(err)
	}
	depth := 1
	if a.Depth != nil {
		depth = *a.Depth
	}
	limit := intOr(a.Limit, DefaultListLimit)
	if c.preflight {
		return checked
	}
	shown := c.scope.show(dir)
	var entries []sb.FileInfo
	if depth <= 1 {
		entries, err = c.nc.Propfind(c.ctx, dir, depth)
	} else {
		entries, err = c.nc.Search(c.ctx, sb.FileSearch{Folder: dir, Limit: MaxListLimit + 1})
	}
	if err != nil {
		if sb.ErrorCode(err) == sb.ENOTFOUND && dir == c.scope.root {
			return c.fail("cannot list your folder "+shown, sb.Wrap(c.op, sb.ENOTFOUND, "it does not exist yet; Nextcloud.mkdir with path \"/\" creates it, and upload creates it too", err))
		}
		return c.fail("cannot list "+shown, err)
	}
	var self *sb.FileInfo
	var kids []sb.FileInfo
	for i, e := range entries {
		switch {
		case e.Path == dir:
			self = &entries[i]
		case depth > 1 && strings.Count(strings.TrimPrefix(e.Path, strings.TrimSuffix(dir, "/")+"/"), "/") >= depth:
			// deeper than asked
		case c.scope.contains(e.Path):
			kids = append(kids, e)
		}
	}
	if depth == 0 || (self != nil && !self.IsDir) {
		if self == nil {
			return c.failMsg(sb.ENOTFOUND, "%s does not exist; list its folder to check the name", shown)
		}
		return sb.OK(map[string]any{"path": shown, "count": 1, "truncated": false,
			"listing": frame("list "+shown, []string{entryLine(shown, *self)})})
	}
	sort.Slice(kids, func(i, j int) bool {
		if kids[i].IsDir != kids[j].IsDir {
			return kids[i].IsDir
		}
		return kids[i].Path < kids[j].Path
	})
	// A SEARCH that hit its own limit may have left entries out, too.
	truncated := len(kids) > limit || (depth > 1 && len(entries) > MaxListLimit)
	if len(kids) > limit {
		kids = kids[:limit]
	}
	lines := make([]string, 0, len(kids))
	for _, e := range kids {
		lines = append(lines, entryLine(c.scope.show(e.Path), e))
	}
	data := map[string]any{"path": shown, "count": len(kids), "truncated": truncated, "listing": frame("list "+shown, lines)}
	switch {
	case len(kids) == 0:
		data["message"] = "the folder is empty"
	case truncated:
		data["message"] = fmt.Sprintf("showing the first %d entries; narrow with a subfolder or Nextcloud.search", limit)
	}
	return sb.OK(data)
}

// intOr is *v, or def when the argument was left out (decodeArgs checked
// its range).
func intOr(v *int, def int) int {
	if v == nil {
		return def
	}
	return *v
}

// stat describes one file or folder with the properties the web UI shows.
func (c *invocation) stat() sb.Envelope {
	p, err := c.pathArg()
	if err != nil {
		return c.bad(err)
	}
	if c.preflight {
		return checked
	}
	e, err := c.nc.Stat(c.ctx, p)
	if err != nil {
		return c.fail("cannot stat "+c.scope.show(p), err)
	}
	kind := "file"
	if e.IsDir {
		kind = "folder"
	}
	data := map[string]any{
		"path":        c.scope.show(p),
		"type":        kind,
		"fileid":      e.FileID,
		"etag":        e.ETag,
		"permissions": e.Permissions,
		"can":         permissionLetters(e.Permissions),
		"favorite":    e.Favorite,
		"share_types": shareTypeNames(e.ShareTypes),
	}
	msg := fmt.Sprintf("%s is a %s of %s", c.scope.show(p), kind, humanBytes(e.Size))
	if e.Size >= 0 {
		data["size"], data["size_human"] = e.Size, humanBytes(e.Size)
	} else { // the server did not say (a folder on a plain WebDAV server)
		msg = fmt.Sprintf("%s is a %s (size unknown)", c.scope.show(p), kind)
	}
	if !e.Modified.IsZero() {
		data["modified"] = utcSecond(e.Modified)
		msg += ", modified " + utcMinute(e.Modified)
	}
	data["message"] = msg
	return sb.OK(data)
}

// mkdir creates a folder and any missing parents; an existing folder is fine.
func (c *invocation) mkdir() sb.Envelope {
	p, err := c.pathArg()
	if err != nil {
		return c.bad(err)
	}
	if c.preflight {
		return checked
	}
	// MKCOL answers 405 both for an existing folder and an existing file,
	// and the client takes 405 as success; a stat first tells them apart.
	switch e, err := c.nc.Stat(c.ctx, p); {
	case err == nil && e.IsDir:
		return sb.OK(map[string]any{"path": c.scope.show(p), "created": false, "message": "the folder " + c.scope.show(p) + " exists already"})
	case err == nil:
		return c.failMsg(sb.ECONFLICT, "%s is a file; choose another folder name", c.scope.show(p))
	case sb.ErrorCode(err) == sb.ECONFLICT: // a file where a parent folder should be
		return c.fail("cannot create "+c.scope.show(p), sb.Wrap(c.op, sb.ECONFLICT, "a file is in the way where a parent folder should be; choose another path", err))
	case sb.ErrorCode(err) != sb.ENOTFOUND:
		return c.fail("cannot create "+c.scope.show(p), err)
	}
	if err := c.nc.MkdirAll(c.ctx, p); err != nil {
		if sb.ErrorCode(err) == sb.ECONFLICT {
			return c.fail("cannot create "+c.scope.show(p), sb.Wrap(c.op, sb.ECONFLICT, "a file is in the way where a parent folder should be; choose another path", err))
		}
		return c.fail("cannot create "+c.scope.show(p), err)
	}
	return sb.OK(map[string]any{"path": c.scope.show(p), "created": true, "message": "created the folder " + c.scope.show(p) + " (and any missing parents)"})
}

// move renames or moves a file or folder inside the root; a missing
// destination folder is created.
func (c *invocation) move() sb.Envelope {
	var a moveArgs
	if err := c.decodeArgs(&a); err != nil {
		return c.bad(err)
	}
	from, err := c.remote("from", a.From)
	if err != nil {
		return c.bad(err)
	}
	if a.To != nil && strings.HasSuffix(*a.To, "/") {
		to := *a.To + path.Base(from) // into a folder, keeping the name
		a.To = &to
	}
	to, err := c.remote("to", a.To)
	if err != nil {
		return c.bad(err)
	}
	for _, x := range []struct{ name, abs string }{{"from", from}, {"to", to}} {
		if err := c.notRoot(x.name, x.abs, "your folder itself cannot be moved or replaced"); err != nil {
			return c.bad(err)
		}
	}
	switch {
	case from == to:
		return c.failMsg(sb.EINVALID, "from and to are the same path (%s); give a different destination", c.scope.show(to))
	case strings.HasPrefix(to, from+"/"):
		return c.failMsg(sb.EINVALID, "cannot move %s into itself (%s); choose a destination outside it", c.scope.show(from), c.scope.show(to))
	}
	if c.preflight {
		return checked
	}
	overwrite := boolOr(a.Overwrite, false)
	what := fmt.Sprintf("cannot move %s to %s", c.scope.show(from), c.scope.show(to))
	created, err := c.nc.Move(c.ctx, from, to, overwrite)
	madeDirs := false
	if status(err) == 409 {
		// The destination folder is missing (the source's absence is a 404).
		if err := c.nc.MkdirAll(c.ctx, path.Dir(to)); err != nil {
			return c.fail(what, err)
		}
		madeDirs = true
		created, err = c.nc.Move(c.ctx, from, to, overwrite)
	}
	if err != nil {
		switch status(err) {
		case 404:
			return c.fail(what, sb.Wrap(c.op, sb.ENOTFOUND, c.scope.show(from)+" does not exist; list its folder to check the name", err))
		case 412:
			return c.fail(what, sb.Wrap(c.op, sb.ECONFLICT, c.scope.show(to)+" exists already; to move into it (if it is a folder) end to with /, "+
				"choose another name, or pass overwrite: true to replace it (the replaced item goes to the trash bin)", err))
		}
		return c.fail(what, err)
	}
	msg := fmt.Sprintf("moved %s to %s", c.scope.show(from), c.scope.show(to))
	if madeDirs {
		msg += " (created the missing folders)"
	}
	if !created {
		msg += "; the item that was there before went to the trash bin"
	}
	return sb.OK(map[string]any{"from": c.scope.show(from), "to": c.scope.show(to), "replaced": !created, "message": msg})
}

// delete removes a file or folder (into the trash bin when the server has
// one). Staging makes it wait for approval; the tool just deletes.
func (c *invocation) delete() sb.Envelope {
	p, err := c.pathArg()
	if err != nil {
		return c.bad(err)
	}
	if err := c.notRoot("path", p, "your folder itself cannot be deleted; delete what is inside one by one"); err != nil {
		return c.bad(err)
	}
	if c.preflight {
		// A delete waits for a human by default: make sure there is
		// something to delete before anyone is asked.
		if _, err := c.nc.Stat(c.ctx, p); sb.ErrorCode(err) == sb.ENOTFOUND {
			return c.fail("cannot delete "+c.scope.show(p), err)
		}
		return checked
	}
	if err := c.nc.Delete(c.ctx, p); err != nil {
		return c.fail("cannot delete "+c.scope.show(p), err)
	}
	return sb.OK(map[string]any{"path": c.scope.show(p),
		"message": "deleted " + c.scope.show(p) + "; it is in the trash bin: Nextcloud.trash {op: list} shows it, {op: restore, id} brings it back"})
}

// search finds files by name glob (and MIME type, modification time) with
// the server's index: one SEARCH, scoped to the agent's folder.
func (c *invocation) search() sb.Envelope {
	var a searchArgs
	if err := c.decodeArgs(&a); err != nil {
		return c.bad(err)
	}
	q, err := c.text("query", a.Query)
	if err != nil {
		return c.bad(err)
	}
	if !strings.ContainsAny(q, "*?") {
		q = "*" + q + "*" // a plain word finds names containing it
	}
	mt := c.optional(a.Mime)
	var after time.Time
	if a.ModifiedAfter != nil {
		if after, err = parseWhen(*a.ModifiedAfter); err != nil {
			return c.failMsg(sb.EINVALID, "modifiedAfter %s is not a date; write 2026-05-01 or 2026-05-01T12:00:00Z (UTC)", quote(*a.ModifiedAfter))
		}
	}
	dir, err := c.remoteOr("path", a.Path)
	if err != nil {
		return c.bad(err)
	}
	limit := intOr(a.Limit, DefaultSearchLimit)
	if c.preflight {
		return checked
	}
	hits, err := c.nc.Search(c.ctx, sb.FileSearch{Folder: dir, Name: q, Mime: mt, ModifiedAfter: after, Limit: limit + 1})
	if err != nil {
		return c.fail("cannot search "+c.scope.show(dir), err)
	}
	var lines []string
	for _, e := range hits {
		if e.Path == dir || !c.scope.contains(e.Path) {
			continue
		}
		lines = append(lines, entryLine(c.scope.show(e.Path), e))
	}
	truncated := len(lines) > limit
	if truncated {
		lines = lines[:limit]
	}
	data := map[string]any{"path": c.scope.show(dir), "query": q, "count": len(lines), "truncated": truncated,
		"listing": frame("search "+c.scope.show(dir), lines)}
	switch {
	case len(lines) == 0:
		data["message"] = "nothing matched; names are matched case-insensitively, * is any run of characters"
	case truncated:
		data["message"] = fmt.Sprintf("showing the first %d matches; narrow the query or raise limit (up to %d)", limit, MaxSearchLimit)
	}
	return sb.OK(data)
}

// parseWhen reads a UTC date or an RFC 3339 time.
func parseWhen(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Parse("2006-01-02", s)
}

// favorite marks or unmarks a file or folder as a favorite.
func (c *invocation) favorite() sb.Envelope {
	var a favoriteArgs
	if err := c.decodeArgs(&a); err != nil {
		return c.bad(err)
	}
	p, err := c.remote("path", a.Path)
	if err != nil {
		return c.bad(err)
	}
	if c.preflight {
		return checked
	}
	fav := boolOr(a.Favorite, true)
	if err := c.nc.SetFavorite(c.ctx, p, fav); err != nil {
		return c.fail("cannot change the favorite mark of "+c.scope.show(p), err)
	}
	msg := "marked " + c.scope.show(p) + " as a favorite"
	if !fav {
		msg = "removed the favorite mark from " + c.scope.show(p)
	}
	return sb.OK(map[string]any{"path": c.scope.show(p), "favorite": fav, "message": msg})
}

// quota reports the account's storage.
func (c *invocation) quota() sb.Envelope {
	if err := c.decodeArgs(&quotaArgs{}); err != nil {
		return c.bad(err)
	}
	if c.preflight {
		return checked
	}
	q, err := c.nc.Quota(c.ctx)
	if err != nil {
		return c.fail("cannot read the quota", err)
	}
	return sb.OK(quotaData(q))
}

func quotaData(q sb.FileQuota) map[string]any {
	// Measured on Nextcloud 34: moving a file to the trash bin lowers used
	// by its size, and earlier versions are not in used either.
	d := map[string]any{"used_bytes": q.Used, "used": humanBytes(q.Used), "unlimited": q.Unlimited,
		"note": "the quota belongs to the Nextcloud account, which other agents may share; used counts the current files only — " +
			"Nextcloud does not count the trash bin and earlier versions in it, so emptying the trash does not lower used"}
	switch {
	case q.Unlimited:
		d["message"] = "no quota: the account may use all the space the server has"
	case q.Available < 0:
		d["message"] = "the server could not compute the free space"
	default:
		d["available_bytes"] = q.Available
		d["available"] = humanBytes(q.Available)
		if total := q.Used + q.Available; total > 0 {
			// One rounding for percent_used and the text, so they agree.
			pct := math.Round(float64(q.Used)*1000/float64(total)) / 10
			d["percent_used"] = pct
			d["message"] = fmt.Sprintf("%s used, %s free (%.1f%% used)", humanBytes(q.Used), humanBytes(q.Available), pct)
		}
	}
	return d
}
