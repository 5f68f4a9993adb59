package nextcloud

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path"
	"strconv"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

// Put uploads size bytes from r to p, replacing an existing file (Nextcloud
// keeps the old content as a version). Above the chunking threshold, and
// when the server offers it, it uses chunked upload v2 (see SetChunking).
// Returns ECONFLICT when the parent folder is missing or the file is locked
// (423, open in Collabora), EFORBIDDEN when the quota is exceeded (507),
// EINVALID for a negative size.
func (c *Client) Put(ctx context.Context, p string, r io.Reader, size int64, contentType string) (switchboard.FilePut, error) {
	op := "nextcloud.put " + p
	cp, err := cleanPath(p)
	if err != nil {
		return switchboard.FilePut{}, invalidPath(op, err)
	}
	if size < 0 {
		return switchboard.FilePut{}, switchboard.E(op, switchboard.EINVALID, "upload size is unknown; pass the file's size in bytes")
	}
	if cp == "/" {
		return switchboard.FilePut{}, switchboard.E(op, switchboard.EINVALID, "cannot upload onto the root folder; give a file name")
	}
	if contentType == "" {
		contentType = "application/octet-stream"
	}
	if c.useChunking(ctx, size) {
		return c.putChunked(ctx, op, cp, r, size)
	}
	rq := &request{method: http.MethodPut, area: "files", path: c.filesPath(cp),
		header: http.Header{"Content-Type": {contentType}}, body: &sizedReader{r: r, left: size}, size: size}
	resp, err := c.send(ctx, op, rq)
	if err != nil {
		return switchboard.FilePut{}, err
	}
	discard(resp)
	return putResult(resp), nil
}

func putResult(resp *http.Response) switchboard.FilePut {
	etag := resp.Header.Get("OC-ETag")
	if etag == "" {
		etag = resp.Header.Get("ETag")
	}
	return switchboard.FilePut{
		ETag:    unquoteETag(etag),
		FileID:  parseOCFileID(resp.Header.Get("OC-FileId")),
		Created: resp.StatusCode == http.StatusCreated,
	}
}

// parseOCFileID reads the numeric prefix of "00000123ocabcdef".
func parseOCFileID(v string) int64 {
	end := 0
	for end < len(v) && v[end] >= '0' && v[end] <= '9' {
		end++
	}
	n, _ := strconv.ParseInt(v[:end], 10, 64)
	return n
}

// Get streams the file at p. Returns ENOTFOUND when it does not exist.
func (c *Client) Get(ctx context.Context, p string) (*switchboard.FileDownload, error) {
	op := "nextcloud.get " + p
	cp, err := cleanPath(p)
	if err != nil {
		return nil, invalidPath(op, err)
	}
	resp, err := c.send(ctx, op, &request{method: http.MethodGet, area: "files", path: c.filesPath(cp)})
	if err != nil {
		return nil, err
	}
	return &switchboard.FileDownload{
		Body:        resp.Body,
		Size:        resp.ContentLength,
		ContentType: resp.Header.Get("Content-Type"),
		ETag:        unquoteETag(resp.Header.Get("ETag")),
		FileID:      parseOCFileID(resp.Header.Get("OC-FileId")),
		Modified:    parseHTTPTime(resp.Header.Get("Last-Modified")),
	}, nil
}

// Mkdir creates the folder p; its parent must exist. An existing folder
// (405) is fine. Returns ECONFLICT when the parent is missing (use MkdirAll).
func (c *Client) Mkdir(ctx context.Context, p string) error {
	op := "nextcloud.mkdir " + p
	cp, err := cleanPath(p)
	if err != nil {
		return invalidPath(op, err)
	}
	_, err = c.mkcol(ctx, op, cp, false)
	return err
}

// MkdirAll creates p and any missing parents. It tries p first (one call
// when the parent exists) and walks up only on 409.
func (c *Client) MkdirAll(ctx context.Context, p string) error {
	op := "nextcloud.mkdir " + p
	cp, err := cleanPath(p)
	if err != nil {
		return invalidPath(op, err)
	}
	return c.mkdirAll(ctx, op, cp)
}

func (c *Client) mkdirAll(ctx context.Context, op, cp string) error {
	if cp == "/" {
		return nil
	}
	missingParent, err := c.mkcol(ctx, op, cp, true)
	if err != nil || !missingParent {
		return err
	}
	if err := c.mkdirAll(ctx, op, path.Dir(cp)); err != nil {
		return err
	}
	_, err = c.mkcol(ctx, op, cp, false)
	return err
}

// mkcol sends one MKCOL. With tolerate409 a missing parent is reported as
// missingParent instead of an error.
func (c *Client) mkcol(ctx context.Context, op, cp string, tolerate409 bool) (missingParent bool, err error) {
	if cp == "/" {
		return false, nil
	}
	rq := &request{method: "MKCOL", area: "files", path: c.filesPath(cp), accept: []int{http.StatusMethodNotAllowed}}
	if tolerate409 {
		rq.accept = append(rq.accept, http.StatusConflict)
	}
	resp, err := c.send(ctx, op, rq)
	if err != nil {
		return false, err
	}
	discard(resp)
	return resp.StatusCode == http.StatusConflict, nil
}

// Propfind describes p (depth 0) or p and its children (depth 1; p comes
// first). Returns ENOTFOUND when p does not exist, EINVALID for other depths.
func (c *Client) Propfind(ctx context.Context, p string, depth int) ([]switchboard.FileInfo, error) {
	op := "nextcloud.propfind " + p
	cp, err := cleanPath(p)
	if err != nil {
		return nil, invalidPath(op, err)
	}
	if depth != 0 && depth != 1 {
		return nil, switchboard.E(op, switchboard.EINVALID, "depth must be 0 (the item) or 1 (the item and its children)")
	}
	rq := &request{method: "PROPFIND", area: "files", path: c.filesPath(cp),
		header: http.Header{"Depth": {strconv.Itoa(depth)}, "Content-Type": {"application/xml; charset=utf-8"}},
		body:   strings.NewReader(propfindFiles), size: int64(len(propfindFiles))}
	return c.entries(ctx, op, rq)
}

// Stat describes one file or folder.
func (c *Client) Stat(ctx context.Context, p string) (switchboard.FileInfo, error) {
	es, err := c.Propfind(ctx, p, 0)
	if err != nil {
		return switchboard.FileInfo{}, err
	}
	if len(es) == 0 {
		return switchboard.FileInfo{}, switchboard.E("nextcloud.stat "+p, switchboard.ENOTFOUND, "not found on Nextcloud: the file or folder does not exist")
	}
	return es[0], nil
}

// List returns the children of folder p (without p itself).
func (c *Client) List(ctx context.Context, p string) ([]switchboard.FileInfo, error) {
	es, err := c.Propfind(ctx, p, 1)
	if err != nil {
		return nil, err
	}
	cp, _ := cleanPath(p)
	out := es[:0]
	for _, e := range es {
		if e.Path != cp {
			out = append(out, e)
		}
	}
	return out, nil
}

// entries sends a PROPFIND or SEARCH and converts the multistatus.
func (c *Client) entries(ctx context.Context, op string, rq *request) ([]switchboard.FileInfo, error) {
	ms, err := c.multistatus(ctx, op, rq)
	if err != nil {
		return nil, err
	}
	out := make([]switchboard.FileInfo, 0, len(ms.Responses))
	for _, r := range ms.Responses {
		e, ok := c.toEntry(r)
		if ok {
			out = append(out, e)
		}
	}
	return out, nil
}

func (c *Client) toEntry(r msResponse) (switchboard.FileInfo, bool) {
	rel, ok := c.relPath(r.Href)
	if !ok {
		return switchboard.FileInfo{}, false
	}
	p, ok := r.props()
	if !ok {
		return switchboard.FileInfo{}, false
	}
	e := switchboard.FileInfo{
		Path:        rel,
		Name:        path.Base(rel),
		IsDir:       p.isDir(),
		FileID:      parseInt(p.FileID),
		Permissions: p.Permissions,
		Size:        size(p),
		ETag:        unquoteETag(p.ETag),
		Modified:    parseHTTPTime(p.LastModified),
		Favorite:    strings.TrimSpace(p.Favorite) == "1",
	}
	if rel == "/" {
		e.Name = ""
	}
	if p.ShareTypes != nil {
		for _, t := range p.ShareTypes.Types {
			e.ShareTypes = append(e.ShareTypes, switchboard.ShareType(t))
		}
	}
	return e, true
}

// size reads an entry's size: Nextcloud's oc:size (which folders have
// too), else getcontentlength, which a standard WebDAV server sends for files
// only; -1 when neither is there or readable, so nobody states a size
// that was never given.
func size(p msProp) int64 {
	read := func(v string) (int64, bool) {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		return n, err == nil && n >= 0
	}
	if n, ok := read(p.Size); ok {
		return n
	}
	if !p.isDir() {
		if n, ok := read(p.ContentLength); ok {
			return n
		}
	}
	return -1
}

// Move renames from to to. overwrite=false makes an existing destination an
// ECONFLICT (412). created reports a new destination (201) vs a replaced one
// (204). Returns ECONFLICT when the destination folder is missing (409) or
// either side is locked (423).
func (c *Client) Move(ctx context.Context, from, to string, overwrite bool) (created bool, err error) {
	return c.copyMove(ctx, "MOVE", "nextcloud.move "+from, from, to, overwrite)
}

// Copy duplicates from at to (folders recursively); the copy gets a new
// file id. Errors as Move.
func (c *Client) Copy(ctx context.Context, from, to string, overwrite bool) (created bool, err error) {
	return c.copyMove(ctx, "COPY", "nextcloud.copy "+from, from, to, overwrite)
}

func (c *Client) copyMove(ctx context.Context, method, op, from, to string, overwrite bool) (bool, error) {
	src, err := cleanPath(from)
	if err != nil {
		return false, invalidPath(op, err)
	}
	dst, err := cleanPath(to)
	if err != nil {
		return false, invalidPath(op, err)
	}
	if src == "/" || dst == "/" {
		return false, switchboard.E(op, switchboard.EINVALID, "the root folder cannot be moved, copied or replaced")
	}
	ow := "F"
	if overwrite {
		ow = "T"
	}
	rq := &request{method: method, area: "files", path: c.filesPath(src),
		header: http.Header{"Destination": {c.filesURL(dst)}, "Overwrite": {ow}}}
	resp, err := c.send(ctx, op, rq)
	if err != nil {
		return false, err
	}
	discard(resp)
	return resp.StatusCode == http.StatusCreated, nil
}

// Delete removes p (into the trash bin when files_trashbin is on).
// Returns ENOTFOUND when it does not exist, ECONFLICT when locked.
func (c *Client) Delete(ctx context.Context, p string) error {
	op := "nextcloud.delete " + p
	cp, err := cleanPath(p)
	if err != nil {
		return invalidPath(op, err)
	}
	if cp == "/" {
		return switchboard.E(op, switchboard.EINVALID, "refusing to delete the root folder")
	}
	resp, err := c.send(ctx, op, &request{method: http.MethodDelete, area: "files", path: c.filesPath(cp)})
	if err != nil {
		return err
	}
	discard(resp)
	return nil
}

// SetFavorite marks or unmarks p as a favorite (PROPPATCH oc:favorite).
func (c *Client) SetFavorite(ctx context.Context, p string, favorite bool) error {
	op := "nextcloud.favorite " + p
	cp, err := cleanPath(p)
	if err != nil {
		return invalidPath(op, err)
	}
	v := 0
	if favorite {
		v = 1
	}
	body := fmt.Sprintf(proppatchFavoriteFormat, v)
	rq := &request{method: "PROPPATCH", area: "files", path: c.filesPath(cp),
		header: http.Header{"Content-Type": {"application/xml; charset=utf-8"}},
		body:   strings.NewReader(body), size: int64(len(body))}
	resp, err := c.send(ctx, op, rq)
	if err != nil {
		return err
	}
	defer discard(resp)
	ms, err := decodeMultistatus(resp.Body)
	if err != nil {
		return c.badAnswer(op, rq, resp.StatusCode, err)
	}
	// A PROPPATCH answers 207 even when the property was refused; the
	// propstat status is the real outcome.
	for _, r := range ms.Responses {
		for _, ps := range r.Propstats {
			if s := statusCode(ps.Status); s != http.StatusOK {
				return classify(op, &httpError{Method: rq.method, Endpoint: rq.endpoint(), Status: s,
					Message: "PROPPATCH oc:favorite refused: " + ps.Status})
			}
		}
	}
	return nil
}

// Quota reports used and available bytes of the account.
func (c *Client) Quota(ctx context.Context) (switchboard.FileQuota, error) {
	const op = "nextcloud.quota"
	rq := &request{method: "PROPFIND", area: "files", path: c.filesPath("/"),
		header: http.Header{"Depth": {"0"}, "Content-Type": {"application/xml; charset=utf-8"}},
		body:   strings.NewReader(propfindQuota), size: int64(len(propfindQuota))}
	resp, err := c.send(ctx, op, rq)
	if err != nil {
		return switchboard.FileQuota{}, err
	}
	defer discard(resp)
	ms, err := decodeMultistatus(resp.Body)
	if err != nil || len(ms.Responses) == 0 {
		return switchboard.FileQuota{}, c.badAnswer(op, rq, resp.StatusCode, err)
	}
	p, _ := ms.Responses[0].props()
	q := switchboard.FileQuota{Used: parseInt(p.QuotaUsed), Available: parseInt(p.QuotaAvail)}
	// Nextcloud: -3 = unlimited, -2 = unknown, -1 = not computed.
	if q.Available < 0 {
		q.Unlimited = q.Available == -3
		q.Available = 0
		if !q.Unlimited {
			q.Available = -1
		}
	}
	return q, nil
}

// badAnswer reports a 2xx answer whose body could not be read.
func (c *Client) badAnswer(op string, rq *request, status int, err error) error {
	if err == nil {
		err = fmt.Errorf("empty multistatus")
	}
	return classify(op, &httpError{Method: rq.method, Endpoint: rq.endpoint(), OCS: rq.ocs,
		Status: status, Undecodable: true, Err: err})
}
