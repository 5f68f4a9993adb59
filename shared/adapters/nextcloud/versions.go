package nextcloud

import (
	"context"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

func (c *Client) versionsPath(fileID int64) string {
	return "/remote.php/dav/versions/" + c.escUser() + "/versions/" + strconv.FormatInt(fileID, 10)
}

// Versions lists the earlier versions of the file with fileID (Entry.FileID),
// in the server's order (Nextcloud 34: oldest first, the current content
// listed too). Returns ENOTFOUND for an unknown id.
func (c *Client) Versions(ctx context.Context, fileID int64) ([]switchboard.FileVersion, error) {
	op := "nextcloud.versions " + strconv.FormatInt(fileID, 10)
	rq := &request{method: "PROPFIND", area: "versions", path: c.versionsPath(fileID),
		header: http.Header{"Depth": {"1"}, "Content-Type": {"application/xml; charset=utf-8"}},
		body:   strings.NewReader(propfindVersions), size: int64(len(propfindVersions))}
	ms, err := c.multistatus(ctx, op, rq)
	if err != nil {
		return nil, err
	}
	var out []switchboard.FileVersion
	for _, r := range ms.Responses {
		p, ok := r.props()
		if !ok || p.isDir() {
			continue // the collection of versions itself
		}
		out = append(out, switchboard.FileVersion{
			ID:          lastSegment(r.Href),
			Size:        parseInt(p.ContentLength),
			ContentType: p.ContentType,
			ETag:        unquoteETag(p.ETag),
			Modified:    parseHTTPTime(p.LastModified),
			Label:       p.VersionLabel,
			Author:      p.VersionAuthor,
		})
	}
	return out, nil
}

// RestoreVersion makes version versionID the current content of the file;
// the current content becomes a version itself.
func (c *Client) RestoreVersion(ctx context.Context, fileID int64, versionID string) error {
	op := "nextcloud.restoreversion " + strconv.FormatInt(fileID, 10)
	if versionID == "" || strings.ContainsAny(versionID, "/\x00") {
		return switchboard.E(op, switchboard.EINVALID, "version id must be a name from the versions list")
	}
	dest := c.origin + c.basePath + "/remote.php/dav/versions/" + c.escUser() + "/restore/target"
	rq := &request{method: "MOVE", area: "versions", path: c.versionsPath(fileID) + "/" + url.PathEscape(versionID),
		header: http.Header{"Destination": {dest}}}
	return c.do(ctx, op, rq)
}

func (c *Client) trashPath() string { return "/remote.php/dav/trashbin/" + c.escUser() + "/trash" }

// Trash lists the trash bin.
func (c *Client) Trash(ctx context.Context) ([]switchboard.TrashItem, error) {
	const op = "nextcloud.trash"
	rq := &request{method: "PROPFIND", area: "trashbin", path: c.trashPath(),
		header: http.Header{"Depth": {"1"}, "Content-Type": {"application/xml; charset=utf-8"}},
		body:   strings.NewReader(propfindTrash), size: int64(len(propfindTrash))}
	ms, err := c.multistatus(ctx, op, rq)
	if err != nil {
		return nil, err
	}
	root, _ := url.PathUnescape(c.basePath + c.trashPath())
	var out []switchboard.TrashItem
	for _, r := range ms.Responses {
		u, err := url.Parse(r.Href)
		if err != nil || strings.TrimRight(u.Path, "/") == root {
			continue // the trash collection itself
		}
		p, ok := r.props()
		if !ok {
			continue
		}
		it := switchboard.TrashItem{
			ID:               lastSegment(r.Href),
			Name:             p.TrashFilename,
			OriginalLocation: path.Clean("/" + p.TrashLocation),
			IsDir:            p.isDir(),
			FileID:           parseInt(p.FileID),
			Size:             parseInt(p.Size),
		}
		if it.Size == 0 {
			it.Size = parseInt(p.ContentLength)
		}
		if ts := parseInt(p.TrashDeleted); ts > 0 {
			it.DeletedAt = time.Unix(ts, 0).UTC()
		}
		out = append(out, it)
	}
	return out, nil
}

// RestoreTrash puts a trash item (TrashItem.ID) back at its original location.
func (c *Client) RestoreTrash(ctx context.Context, id string) error {
	op := "nextcloud.restoretrash " + id
	if id == "" || strings.ContainsAny(id, "/\x00") {
		return switchboard.E(op, switchboard.EINVALID, "trash id must be a name from the trash list")
	}
	dest := c.origin + c.basePath + "/remote.php/dav/trashbin/" + c.escUser() + "/restore/" + url.PathEscape(id)
	rq := &request{method: "MOVE", area: "trashbin", path: c.trashPath() + "/" + url.PathEscape(id),
		header: http.Header{"Destination": {dest}}}
	return c.do(ctx, op, rq)
}

// EmptyTrash deletes everything in the trash bin. It is irreversible: the
// tool asks for confirmation before calling it.
func (c *Client) EmptyTrash(ctx context.Context) error {
	const op = "nextcloud.emptytrash"
	return c.do(ctx, op, &request{method: http.MethodDelete, area: "trashbin", path: c.trashPath()})
}

// multistatus sends a PROPFIND, REPORT or SEARCH and decodes its answer.
func (c *Client) multistatus(ctx context.Context, op string, rq *request) (*msMultistatus, error) {
	resp, err := c.send(ctx, op, rq)
	if err != nil {
		return nil, err
	}
	defer discard(resp)
	ms, err := decodeMultistatus(resp.Body)
	if err != nil {
		return nil, c.badAnswer(op, rq, resp.StatusCode, err)
	}
	return ms, nil
}

// lastSegment is the unescaped last path segment of an href.
func lastSegment(href string) string {
	u, err := url.Parse(href)
	if err != nil {
		return ""
	}
	return path.Base(strings.TrimRight(u.Path, "/"))
}
