package ncfake

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
)

// version is an earlier content of a file.
type version struct {
	ts      int64 // its name: the old content's mtime in unix seconds
	data    []byte
	modTime time.Time
	current bool // the entry for the current content (listed, not readable)
}

// trashItem is a deleted file or folder with everything below it.
type trashItem struct {
	name      string // "<base>.d<deletion ts>"
	origPath  string // "/Docs/a.txt"
	deletedAt time.Time
	isDir     bool
	size      int64
	nodes     []trashNode // parents before children
}

type trashNode struct {
	rel     string // relative to origPath ("" for the item itself)
	isDir   bool
	data    []byte
	modTime time.Time
	id      int64
}

// upload is a chunked upload v2 in progress.
type upload struct {
	dest   string // destination path relative to the user root, "" if not announced
	chunks map[int][]byte
}

// filesPath turns a files URL path into the user path, ok=false when it
// belongs to another user.
func (s *Server) filesPath(urlPath string) (string, bool) {
	rest, ok := strings.CutPrefix(urlPath, "/remote.php/dav/files/"+s.opts.User)
	if !ok || (rest != "" && !strings.HasPrefix(rest, "/")) {
		return "", false
	}
	return clean(rest), true
}

// destination reads a Destination header (absolute URL or path) into a user
// path below prefix.
func (s *Server) destination(r *http.Request, prefix string) (string, bool) {
	u, err := url.Parse(r.Header.Get("Destination"))
	if err != nil || r.Header.Get("Destination") == "" {
		return "", false
	}
	rest, ok := strings.CutPrefix(u.Path, prefix)
	if !ok || (rest != "" && !strings.HasPrefix(rest, "/")) {
		return "", false
	}
	return clean(rest), true
}

// lockedAt reports a Lock on p or below it.
func (s *Server) lockedAt(p string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for l := range s.locks {
		if under(l, p) {
			return true
		}
	}
	return false
}

func fileLocked(w http.ResponseWriter, p string) {
	sabre(w, http.StatusLocked, `OCA\DAV\Connector\Sabre\Exception\FileLocked`, fmt.Sprintf("%q is locked", strings.TrimPrefix(p, "/")))
}

// overQuota answers 507 when length more bytes do not fit.
func (s *Server) overQuota(w http.ResponseWriter, p string, length int64) bool {
	s.mu.Lock()
	quota := s.quota
	s.mu.Unlock()
	if quota < 0 {
		return false
	}
	free := max(0, quota-s.treeSize("/"))
	if length <= free {
		return false
	}
	sabre(w, http.StatusInsufficientStorage, `Sabre\DAV\Exception\InsufficientStorage`,
		fmt.Sprintf("Insufficient space in %s, %d required, %d available", p, length, free))
	return true
}

// uploadLength is the announced size: Content-Length, or the headers
// Nextcloud's QuotaPlugin reads.
func uploadLength(r *http.Request) int64 {
	n := r.ContentLength
	for _, h := range []string{"X-Expected-Entity-Length", "OC-Total-Length"} {
		if v, err := strconv.ParseInt(r.Header.Get(h), 10, 64); err == nil && v > n {
			n = v
		}
	}
	return n
}

func (s *Server) stat(p string) (os.FileInfo, error) { return s.mem.Stat(context.Background(), p) }

func (s *Server) readFile(p string) ([]byte, os.FileInfo, error) {
	f, err := s.mem.OpenFile(context.Background(), p, os.O_RDONLY, 0)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	b, err := io.ReadAll(f)
	return b, fi, err
}

// idOf returns the file id of p, 0 when unknown.
func (s *Server) idOf(p string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ids[p]
}

// pathOf returns the current path of file id, "" when it is gone.
func (s *Server) pathOf(id int64) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pathOfLocked(id)
}

func (s *Server) pathOfLocked(id int64) string {
	for p, i := range s.ids {
		if i == id {
			return p
		}
	}
	return ""
}

// keepVersion stores p's current content as a version (before an overwrite).
func (s *Server) keepVersion(p string) { s.addVersion(s.oldVersion(p)) }

// oldVersion reads p's current content as a would-be version.
func (s *Server) oldVersion(p string) (int64, *version) {
	data, fi, err := s.readFile(p)
	if err != nil || fi.IsDir() {
		return 0, nil
	}
	id := s.idOf(p)
	mod := s.mtimeOf(id, fi)
	return id, &version{ts: mod.Unix(), data: data, modTime: mod}
}

// setMtime records the mtime a client stated with X-OC-Mtime (unix
// seconds; 0 = none, the write's own time applies). Versions are named
// after it, as on Nextcloud.
func (s *Server) setMtime(p string, unix int64) {
	id := s.idOf(p)
	s.mu.Lock()
	defer s.mu.Unlock()
	if unix > 0 {
		s.mtimes[id] = time.Unix(unix, 0)
	} else {
		delete(s.mtimes, id)
	}
}

// mtimeOf is the stated mtime of file id, else the memory FS's.
func (s *Server) mtimeOf(id int64, fi os.FileInfo) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.mtimes[id]; ok {
		return t
	}
	return fi.ModTime()
}

func (s *Server) addVersion(id int64, v *version) {
	if v == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ts := v.ts
	for _, v := range s.versions[id] {
		if v.ts >= ts {
			ts = v.ts + 1 // names must stay unique within one second
		}
	}
	v.ts = ts
	s.versions[id] = append(s.versions[id], v)
}

// writeFile replaces or creates p through the wrapped FS (so ids are kept),
// keeping the old content as a version. It reports whether p existed.
func (s *Server) writeFile(p string, data []byte) (existed bool, err error) {
	if fi, err := s.stat(p); err == nil {
		if fi.IsDir() {
			return true, os.ErrExist
		}
		existed = true
		s.keepVersion(p)
		s.setMtime(p, 0)
	}
	f, err := s.fs.OpenFile(context.Background(), p, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
	if err != nil {
		return existed, err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return existed, err
	}
	return existed, f.Close()
}

// etag is x/net's ETag formula, so PUT, PROPFIND and SEARCH agree.
func etag(fi os.FileInfo) string { return fmt.Sprintf(`"%x%x"`, fi.ModTime().UnixNano(), fi.Size()) }

// putHeaders sets what Nextcloud sends after a write.
func (s *Server) putHeaders(w http.ResponseWriter, p string) {
	fi, err := s.stat(p)
	if err != nil {
		return
	}
	w.Header().Set("ETag", etag(fi))
	w.Header().Set("OC-ETag", etag(fi))
	w.Header().Set("OC-FileId", fmt.Sprintf("%08d%s", s.idOf(p), instanceID))
}

// serveFiles hands WebDAV on the user's files to x/net's handler, adding
// Nextcloud's checks before and headers after.
func (s *Server) serveFiles(w http.ResponseWriter, r *http.Request) {
	p, ok := s.filesPath(r.URL.Path)
	if !ok {
		sabre(w, http.StatusNotFound, `Sabre\DAV\Exception\NotFound`, "Principal not found")
		return
	}
	dw := &davWriter{ResponseWriter: w}
	switch r.Method {
	case http.MethodPut:
		if s.lockedAt(p) {
			fileLocked(w, p)
			return
		}
		if s.overQuota(w, p, uploadLength(r)) {
			return
		}
		fi, err := s.stat(p)
		if err == nil && fi.IsDir() {
			sabre(w, http.StatusConflict, `Sabre\DAV\Exception\Conflict`, "PUT is not allowed on non-files.")
			return
		}
		// Nextcloud answers a PUT into a missing folder with 404 (Sabre's
		// NotFound for the first missing segment), not the 409 of RFC 4918
		// that MKCOL and MOVE answer; a file in the way of a folder is a
		// 404 too ("Node with name 'x' could not be found").
		if missing, ok := s.missingParent(p); ok {
			sabre(w, http.StatusNotFound, `Sabre\DAV\Exception\NotFound`, missing)
			return
		}
		present := err == nil
		existed := present && !fi.IsDir()
		id, old := s.oldVersion(p)
		mtime, _ := strconv.ParseInt(r.Header.Get("X-OC-Mtime"), 10, 64)
		dw.before = func(status int) int {
			if status != http.StatusCreated {
				// Nextcloud writes to a .part file first: a failed upload
				// leaves neither a partial file nor a damaged old one.
				s.undoPut(p, present, old)
				return status
			}
			s.addVersion(id, old) // only a successful overwrite makes a version
			s.setMtime(p, mtime)
			if mtime > 0 {
				dw.Header().Set("X-OC-MTime", "accepted")
			}
			s.putHeaders(dw, p)
			if existed {
				return http.StatusNoContent
			}
			return status
		}
	case http.MethodDelete:
		if s.lockedAt(p) {
			fileLocked(w, p)
			return
		}
		if p == "/" {
			sabre(w, http.StatusForbidden, `Sabre\DAV\Exception\Forbidden`, "Cannot delete the home folder")
			return
		}
		item := s.snapshot(p)
		dw.before = func(status int) int {
			if status == http.StatusNoContent && item != nil {
				s.mu.Lock()
				s.trash = append(s.trash, item)
				s.mu.Unlock()
			}
			return status
		}
	case "MKCOL", "PROPFIND":
		// Below a file, Nextcloud answers MKCOL with 409 and PROPFIND with
		// 404 (x/net/webdav would answer 405).
		if s.fileInPath(p) {
			if r.Method == "MKCOL" {
				sabre(w, http.StatusConflict, `Sabre\DAV\Exception\Conflict`, "Parent node is not a collection")
			} else {
				sabre(w, http.StatusNotFound, `Sabre\DAV\Exception\NotFound`, "File with name "+p+" could not be located")
			}
			return
		}
	case "MOVE", "COPY":
		dst, ok := s.destination(r, "/remote.php/dav/files/"+s.opts.User)
		if !ok {
			sabre(w, http.StatusBadRequest, `Sabre\DAV\Exception\BadRequest`, "The destination header was not understood")
			return
		}
		if _, err := s.stat(p); err != nil {
			sabre(w, http.StatusNotFound, `Sabre\DAV\Exception\NotFound`, "File with name "+strings.TrimPrefix(p, "/")+" could not be located")
			return
		}
		if (r.Method == "MOVE" && s.lockedAt(p)) || s.lockedAt(dst) {
			fileLocked(w, p)
			return
		}
		if fi, err := s.stat(path.Dir(dst)); err != nil || !fi.IsDir() {
			sabre(w, http.StatusConflict, `Sabre\DAV\Exception\Conflict`, "The destination node is not found")
			return
		}
		if r.Header.Get("Overwrite") == "" {
			r.Header.Set("Overwrite", "T") // Sabre's default; x/net's is F for MOVE
		}
	}
	s.dav.ServeHTTP(dw, r)
}

// missingParent reports, for a path whose parent folder is missing or is a
// file, the text of the 404 Nextcloud answers a PUT with.
func (s *Server) missingParent(p string) (string, bool) {
	segs := strings.Split(strings.Trim(p, "/"), "/")
	cur := ""
	for _, seg := range segs[:len(segs)-1] {
		cur += "/" + seg
		fi, err := s.stat(cur)
		if err != nil {
			return "File with name " + cur + " could not be located", true
		}
		if !fi.IsDir() {
			return "Node with name '" + seg + "' could not be found", true
		}
	}
	return "", false
}

// fileInPath reports whether a parent of p is a file.
func (s *Server) fileInPath(p string) bool {
	for dir := path.Dir(p); dir != "/" && dir != "."; dir = path.Dir(dir) {
		if fi, err := s.stat(dir); err == nil && !fi.IsDir() {
			return true
		}
	}
	return false
}

// undoPut restores the state before a failed PUT.
func (s *Server) undoPut(p string, present bool, old *version) {
	ctx := context.Background()
	if !present {
		s.fs.RemoveAll(ctx, p)
		return
	}
	if old == nil {
		return
	}
	if f, err := s.mem.OpenFile(ctx, p, os.O_RDWR|os.O_TRUNC, 0); err == nil {
		f.Write(old.data)
		f.Close()
	}
}

// snapshot captures p and everything below it for the trash.
func (s *Server) snapshot(p string) *trashItem {
	fi, err := s.stat(p)
	if err != nil {
		return nil
	}
	now := s.clock()
	item := &trashItem{
		name:      fmt.Sprintf("%s.d%d", path.Base(p), now.Unix()),
		origPath:  p,
		deletedAt: now,
		isDir:     fi.IsDir(),
	}
	s.walk(p, func(q string, qi os.FileInfo) {
		n := trashNode{rel: strings.TrimPrefix(q, p), isDir: qi.IsDir(), modTime: qi.ModTime(), id: s.idOf(q)}
		if !qi.IsDir() {
			n.data, _, _ = s.readFile(q)
			item.size += qi.Size()
		}
		item.nodes = append(item.nodes, n)
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.trash {
		if t.name == item.name {
			item.name += "-" + strconv.Itoa(len(s.trash)) // keep names unique within one second
		}
	}
	return item
}

// restore puts a trash item back; a taken name gets " (restored)".
func (s *Server) restore(item *trashItem) error {
	ctx := context.Background()
	target := item.origPath
	if _, err := s.stat(target); err == nil {
		ext := path.Ext(target)
		target = strings.TrimSuffix(target, ext) + " (restored)" + ext
	}
	// Missing parents are recreated, as Nextcloud restores into the
	// original folder when it can.
	dir := path.Dir(target)
	var missing []string
	for d := dir; d != "/"; d = path.Dir(d) {
		if _, err := s.stat(d); err == nil {
			break
		}
		missing = append([]string{d}, missing...)
	}
	for _, d := range missing {
		if err := s.fs.Mkdir(ctx, d, 0o777); err != nil {
			return err
		}
	}
	for _, n := range item.nodes {
		q := target + n.rel
		if n.isDir {
			if err := s.fs.Mkdir(ctx, q, 0o777); err != nil {
				return err
			}
		} else if _, err := s.writeFile(q, n.data); err != nil {
			return err
		}
		if n.id != 0 {
			s.mu.Lock()
			s.ids[q] = n.id // the file id survives the trash
			s.mu.Unlock()
		}
	}
	return nil
}

// serveUploads implements chunked upload v2.
func (s *Server) serveUploads(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/remote.php/dav/uploads/"+s.opts.User+"/")
	s.mu.Lock()
	chunking := s.chunking
	s.mu.Unlock()
	if !ok || !chunking {
		sabre(w, http.StatusNotFound, `Sabre\DAV\Exception\NotFound`, "No uploads collection")
		return
	}
	id, chunk, _ := strings.Cut(strings.TrimSuffix(rest, "/"), "/")
	s.mu.Lock()
	up := s.uploads[id]
	s.mu.Unlock()
	filesPrefix := "/remote.php/dav/files/" + s.opts.User

	switch {
	case r.Method == "MKCOL" && chunk == "":
		if up != nil {
			sabre(w, http.StatusMethodNotAllowed, `Sabre\DAV\Exception\MethodNotAllowed`, "The resource you tried to create already exists")
			return
		}
		dest, _ := s.destination(r, filesPrefix)
		if dest != "" && s.overQuota(w, dest, uploadLength(r)) {
			return
		}
		s.mu.Lock()
		s.uploads[id] = &upload{dest: dest, chunks: map[int][]byte{}}
		s.mu.Unlock()
		w.WriteHeader(http.StatusCreated)
	case up == nil:
		sabre(w, http.StatusNotFound, `Sabre\DAV\Exception\NotFound`, "Upload "+id+" not found")
	case r.Method == http.MethodDelete && chunk == "":
		s.mu.Lock()
		delete(s.uploads, id)
		s.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	case r.Method == http.MethodPut && chunk != "" && chunk != ".file":
		n, err := strconv.Atoi(chunk)
		if err != nil || n < 1 || n > 10000 {
			sabre(w, http.StatusBadRequest, `Sabre\DAV\Exception\BadRequest`, "Invalid chunk name, must be numeric between 1 and 10000")
			return
		}
		// Nextcloud checks the Destination's folder on every chunk PUT
		// and answers 404 when it is missing.
		if missing, ok := s.missingParent(up.dest); ok && up.dest != "" && !s.fileInPath(up.dest) {
			sabre(w, http.StatusNotFound, `Sabre\DAV\Exception\NotFound`, missing)
			return
		}
		if s.overQuota(w, up.dest, uploadLength(r)) {
			return
		}
		data, err := io.ReadAll(r.Body)
		if err != nil {
			sabre(w, http.StatusBadRequest, `Sabre\DAV\Exception\BadRequest`, "Could not read the chunk")
			return
		}
		s.mu.Lock()
		up.chunks[n] = data
		s.mu.Unlock()
		w.WriteHeader(http.StatusCreated)
	case r.Method == http.MethodGet:
		sabre(w, http.StatusMethodNotAllowed, `Sabre\DAV\Exception\MethodNotAllowed`, "Chunks cannot be downloaded")
	case r.Method == "MOVE" && chunk == ".file":
		s.assemble(w, r, id, up)
	default:
		sabre(w, http.StatusMethodNotAllowed, `Sabre\DAV\Exception\MethodNotAllowed`, "Not supported on uploads")
	}
}

// assemble finishes a chunked upload: MOVE {id}/.file onto the destination.
func (s *Server) assemble(w http.ResponseWriter, r *http.Request, id string, up *upload) {
	dest, ok := s.destination(r, "/remote.php/dav/files/"+s.opts.User)
	if !ok || dest == "/" {
		sabre(w, http.StatusBadRequest, `Sabre\DAV\Exception\BadRequest`, "The destination header was not understood")
		return
	}
	if s.lockedAt(dest) {
		fileLocked(w, dest)
		return
	}
	s.mu.Lock()
	nums := make([]int, 0, len(up.chunks))
	for n := range up.chunks {
		nums = append(nums, n)
	}
	sort.Ints(nums)
	var buf bytes.Buffer
	var tooSmall int
	for i, n := range nums {
		if i < len(nums)-1 && int64(len(up.chunks[n])) < s.minChunk && tooSmall == 0 {
			tooSmall = n
		}
		buf.Write(up.chunks[n])
	}
	minChunk := s.minChunk
	s.mu.Unlock()
	if tooSmall != 0 {
		sabre(w, http.StatusBadRequest, `Sabre\DAV\Exception\BadRequest`,
			fmt.Sprintf("Chunk %d is smaller than the minimum of %d bytes and is not the last one", tooSmall, minChunk))
		return
	}
	if v := r.Header.Get("OC-Total-Length"); v != "" {
		if want, err := strconv.ParseInt(v, 10, 64); err != nil || want != int64(buf.Len()) {
			sabre(w, http.StatusBadRequest, `Sabre\DAV\Exception\BadRequest`,
				fmt.Sprintf("Chunks on server do not sum up to %s but to %d bytes", v, buf.Len()))
			return
		}
	}
	// Nextcloud's answers to the final MOVE: a file in the way of a folder
	// is 415, a folder at the destination 400.
	if s.fileInPath(dest) {
		sabre(w, http.StatusUnsupportedMediaType, `Sabre\DAV\Exception\UnsupportedMediaType`, "The destination node is not a collection")
		return
	}
	if fi, err := s.stat(dest); err == nil && fi.IsDir() {
		sabre(w, http.StatusBadRequest, `Sabre\DAV\Exception\BadRequest`, "The given destination "+strings.TrimPrefix(dest, "/")+" is a directory")
		return
	}
	if fi, err := s.stat(path.Dir(dest)); err != nil || !fi.IsDir() {
		sabre(w, http.StatusConflict, `Sabre\DAV\Exception\Conflict`, "The destination node is not found")
		return
	}
	if s.overQuota(w, dest, int64(buf.Len())) {
		return
	}
	existed, err := s.writeFile(dest, buf.Bytes())
	if err != nil {
		sabre(w, http.StatusConflict, `Sabre\DAV\Exception\Conflict`, "Could not write the destination")
		return
	}
	s.mu.Lock()
	delete(s.uploads, id)
	s.mu.Unlock()
	s.putHeaders(w, dest)
	w.Header().Set("Content-Length", "0")
	if existed {
		w.WriteHeader(http.StatusNoContent)
	} else {
		w.WriteHeader(http.StatusCreated)
	}
}

// serveVersions: PROPFIND versions/{fileid}, GET and MOVE (restore) of
// versions/{fileid}/{ts}.
func (s *Server) serveVersions(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/remote.php/dav/versions/"+s.opts.User+"/versions/")
	if !ok {
		sabre(w, http.StatusNotFound, `Sabre\DAV\Exception\NotFound`, "Not found")
		return
	}
	idStr, ts, _ := strings.Cut(strings.TrimSuffix(rest, "/"), "/")
	id, _ := strconv.ParseInt(idStr, 10, 64)
	p := s.pathOf(id)
	if p == "" {
		sabre(w, http.StatusNotFound, `Sabre\DAV\Exception\NotFound`, "File with id "+idStr+" not found")
		return
	}
	s.mu.Lock()
	vs := append([]*version(nil), s.versions[id]...)
	s.mu.Unlock()
	var v *version
	if ts != "" {
		for _, c := range vs {
			if strconv.FormatInt(c.ts, 10) == ts {
				v = c
			}
		}
		if v == nil {
			sabre(w, http.StatusNotFound, `Sabre\DAV\Exception\NotFound`, "Version "+ts+" not found")
			return
		}
	}
	base := "/remote.php/dav/versions/" + s.opts.User + "/versions/" + idStr
	switch {
	case r.Method == "PROPFIND" && ts == "":
		ms := newMultistatus()
		ms.add(base+"/", map[string]string{"d:resourcetype": "<d:collection/>"})
		// Nextcloud 34 lists the current content as one more entry, named
		// after its mtime; a GET of it answers 404.
		if data, fi, err := s.readFile(p); err == nil {
			mod := s.mtimeOf(id, fi)
			ts := mod.Unix()
			for _, c := range vs {
				ts = max(ts, c.ts+1) // the fake keeps names unique within a second
			}
			vs = append(vs, &version{ts: ts, data: data, modTime: mod, current: true})
		}
		sort.Slice(vs, func(i, j int) bool { return vs[i].ts < vs[j].ts }) // Nextcloud 34: oldest first
		for _, c := range vs {
			ms.add(base+"/"+strconv.FormatInt(c.ts, 10), map[string]string{
				"d:getlastmodified":  c.modTime.UTC().Format(http.TimeFormat),
				"d:getcontentlength": strconv.Itoa(len(c.data)),
				"d:getcontenttype":   contentType(p, false),
				"d:getetag":          xmlText(fmt.Sprintf(`"%x%x"`, c.modTime.UnixNano(), len(c.data))),
				"d:resourcetype":     "",
				"nc:version-label":   "",
				"nc:version-author":  s.opts.User,
			})
		}
		ms.write(w)
	case r.Method == http.MethodGet && v != nil:
		w.Header().Set("Content-Type", contentType(p, false))
		w.Header().Set("Content-Length", strconv.Itoa(len(v.data)))
		w.Write(v.data)
	case r.Method == "MOVE" && v != nil:
		if dest, ok := s.destination(r, "/remote.php/dav/versions/"+s.opts.User); !ok || dest != "/restore/target" {
			sabre(w, http.StatusBadRequest, `Sabre\DAV\Exception\BadRequest`, "Versions can only be moved to restore/target")
			return
		}
		if s.lockedAt(p) {
			fileLocked(w, p)
			return
		}
		if _, err := s.writeFile(p, v.data); err != nil {
			sabre(w, http.StatusConflict, `Sabre\DAV\Exception\Conflict`, "Could not restore")
			return
		}
		s.mu.Lock()
		kept := s.versions[id][:0]
		for _, c := range s.versions[id] {
			if c != v {
				kept = append(kept, c)
			}
		}
		s.versions[id] = kept
		s.mu.Unlock()
		w.WriteHeader(http.StatusCreated)
	default:
		sabre(w, http.StatusMethodNotAllowed, `Sabre\DAV\Exception\MethodNotAllowed`, "Not supported on versions")
	}
}

// serveTrash: PROPFIND trash, MOVE trash/{item} → restore/{item}, DELETE
// trash (empty) or trash/{item}.
func (s *Server) serveTrash(w http.ResponseWriter, r *http.Request) {
	base := "/remote.php/dav/trashbin/" + s.opts.User
	rest, ok := strings.CutPrefix(r.URL.Path, base+"/trash")
	if !ok || (rest != "" && !strings.HasPrefix(rest, "/")) {
		sabre(w, http.StatusNotFound, `Sabre\DAV\Exception\NotFound`, "Not found")
		return
	}
	name := strings.Trim(rest, "/")
	var item *trashItem
	if name != "" {
		s.mu.Lock()
		for _, t := range s.trash {
			if t.name == name {
				item = t
			}
		}
		s.mu.Unlock()
		if item == nil {
			sabre(w, http.StatusNotFound, `Sabre\DAV\Exception\NotFound`, "Trash item "+name+" not found")
			return
		}
	}
	switch {
	case r.Method == "PROPFIND" && name == "":
		s.mu.Lock()
		items := append([]*trashItem(nil), s.trash...)
		s.mu.Unlock()
		ms := newMultistatus()
		ms.add(base+"/trash/", map[string]string{"d:resourcetype": "<d:collection/>"})
		for _, t := range items {
			href := base + "/trash/" + url.PathEscape(t.name)
			rt := ""
			if t.isDir {
				href += "/"
				rt = "<d:collection/>"
			}
			var id int64
			if len(t.nodes) > 0 {
				id = t.nodes[0].id
			}
			ms.add(href, map[string]string{
				"d:resourcetype":                      rt,
				"d:getcontentlength":                  strconv.FormatInt(t.size, 10),
				"oc:fileid":                           strconv.FormatInt(id, 10),
				"oc:size":                             strconv.FormatInt(t.size, 10),
				"nc:trashbin-filename":                xmlText(path.Base(t.origPath)),
				"nc:trashbin-original-location":       xmlText(strings.TrimPrefix(t.origPath, "/")),
				"nc:trashbin-deletion-time":           strconv.FormatInt(t.deletedAt.Unix(), 10),
				"nc:trashbin-title":                   xmlText(path.Base(t.origPath)),
				"nc:trashbin-deleted-by-id":           s.opts.User,
				"nc:trashbin-deleted-by-display-name": s.opts.User,
			})
		}
		ms.write(w)
	case r.Method == "MOVE" && item != nil:
		dest, ok := s.destination(r, base)
		if !ok || !strings.HasPrefix(dest, "/restore/") {
			sabre(w, http.StatusBadRequest, `Sabre\DAV\Exception\BadRequest`, "Trash items can only be moved to restore/")
			return
		}
		if err := s.restore(item); err != nil {
			sabre(w, http.StatusConflict, `Sabre\DAV\Exception\Conflict`, "Could not restore "+item.name)
			return
		}
		s.dropTrash(item)
		w.WriteHeader(http.StatusCreated)
	case r.Method == http.MethodDelete:
		s.mu.Lock()
		if item == nil {
			s.trash = nil
		}
		s.mu.Unlock()
		if item != nil {
			s.dropTrash(item)
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		sabre(w, http.StatusMethodNotAllowed, `Sabre\DAV\Exception\MethodNotAllowed`, "Not supported on the trash bin")
	}
}

func (s *Server) dropTrash(item *trashItem) {
	s.mu.Lock()
	defer s.mu.Unlock()
	kept := s.trash[:0]
	for _, t := range s.trash {
		if t != item {
			kept = append(kept, t)
		}
	}
	s.trash = kept
}

// File returns the content of p, for test assertions.
func (s *Server) File(p string) ([]byte, error) {
	b, _, err := s.readFile(clean(p))
	return b, err
}

// WriteFile seeds p with data, creating missing folders.
func (s *Server) WriteFile(p string, data []byte) error {
	p = clean(p)
	var missing []string
	for d := path.Dir(p); d != "/"; d = path.Dir(d) {
		if _, err := s.stat(d); err == nil {
			break
		}
		missing = append([]string{d}, missing...)
	}
	for _, d := range missing {
		if err := s.fs.Mkdir(context.Background(), d, 0o777); err != nil {
			return err
		}
	}
	_, err := s.writeFile(p, data)
	return err
}

// PendingUploads counts chunked uploads that were neither finished nor aborted.
func (s *Server) PendingUploads() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.uploads)
}

// FileID returns the file id of p, 0 when it does not exist.
func (s *Server) FileID(p string) int64 { return s.idOf(clean(p)) }
