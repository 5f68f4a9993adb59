package nextcloud

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

// ChunkMode says when Put uses chunked upload v2.
type ChunkMode int

const (
	// ChunkAuto chunks above the threshold when capabilities list
	// dav.chunking (asked once per client and cached).
	ChunkAuto ChunkMode = iota
	// ChunkAlways chunks above the threshold without asking.
	ChunkAlways
	// ChunkNever always sends one plain PUT.
	ChunkNever
)

// MinChunkSize is the smallest chunk Nextcloud accepts for every chunk but
// the last: v2 follows S3 multipart rules (5 MB–5 GB).
const MinChunkSize = 5 << 20

// Chunking configures chunked upload v2.
type Chunking struct {
	Mode      ChunkMode
	Threshold int64 // uploads larger than this are chunked; 0 = default (10 MiB)
	ChunkSize int64 // 0 = default (10 MiB); at least MinChunkSize
}

var defaultChunking = Chunking{Mode: ChunkAuto, Threshold: 10 << 20, ChunkSize: 10 << 20}

// SetChunking changes the chunking policy. Returns EINVALID for a chunk
// size below MinChunkSize.
func (c *Client) SetChunking(ch Chunking) error {
	if ch.Threshold == 0 {
		ch.Threshold = defaultChunking.Threshold
	}
	if ch.ChunkSize == 0 {
		ch.ChunkSize = defaultChunking.ChunkSize
	}
	if ch.ChunkSize < MinChunkSize || ch.Threshold < 0 {
		return switchboard.E("nextcloud.chunking", switchboard.EINVALID,
			fmt.Sprintf("chunk size must be at least %d bytes (Nextcloud's 5 MB minimum) and the threshold not negative", MinChunkSize))
	}
	c.mu.Lock()
	c.chunking = ch
	c.mu.Unlock()
	return nil
}

// useChunking decides per upload. A failed capabilities call falls back to
// a plain PUT and is asked again next time.
func (c *Client) useChunking(ctx context.Context, size int64) bool {
	c.mu.Lock()
	ch, caps := c.chunking, c.caps
	c.mu.Unlock()
	if ch.Mode == ChunkNever || size <= ch.Threshold {
		return false
	}
	if ch.Mode == ChunkAlways {
		return true
	}
	if caps == nil {
		var err error
		if caps, err = c.Capabilities(ctx); err != nil {
			return false
		}
	}
	return caps.Chunking != ""
}

// putChunked runs chunked upload v2: MKCOL the upload
// folder, PUT numbered chunks, MOVE .file onto the destination. Every request
// carries the Destination so the server can pick the v2 path; a failure
// after MKCOL deletes the upload folder.
func (c *Client) putChunked(ctx context.Context, op, cp string, r io.Reader, size int64) (switchboard.FilePut, error) {
	c.mu.Lock()
	chunkSize := c.chunking.ChunkSize
	c.mu.Unlock()

	id, err := uploadID()
	if err != nil {
		return switchboard.FilePut{}, switchboard.Wrap(op, switchboard.EINTERNAL, "could not start the upload; try again", err)
	}
	dir := "/remote.php/dav/uploads/" + c.escUser() + "/" + id
	dest := c.filesURL(cp)
	total := strconv.FormatInt(size, 10)
	hdr := func() http.Header {
		return http.Header{"Destination": {dest}, "OC-Total-Length": {total}}
	}

	if err := c.do(ctx, op, &request{method: "MKCOL", area: "uploads", path: dir, header: hdr()}); err != nil {
		return switchboard.FilePut{}, err
	}

	res, err := c.sendChunks(ctx, op, dir, r, size, chunkSize, hdr)
	if err != nil {
		// Abort so the half upload does not sit on the server for 24 h. Use
		// a fresh context: the caller's may be what failed.
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if resp, derr := c.send(actx, op, &request{method: http.MethodDelete, area: "uploads", path: dir}); derr == nil {
			discard(resp)
		}
		return switchboard.FilePut{}, err
	}
	return res, nil
}

func (c *Client) sendChunks(ctx context.Context, op, dir string, r io.Reader, size, chunkSize int64, hdr func() http.Header) (switchboard.FilePut, error) {
	remaining := size
	for n := 1; remaining > 0; n++ {
		part := min(chunkSize, remaining)
		rq := &request{method: http.MethodPut, area: "uploads", path: fmt.Sprintf("%s/%05d", dir, n),
			header: hdr(), body: &sizedReader{r: r, left: part}, size: part}
		rq.header.Set("Content-Type", "application/octet-stream")
		if err := c.do(ctx, op, rq); err != nil {
			return switchboard.FilePut{}, err
		}
		remaining -= part
	}
	rq := &request{method: "MOVE", area: "uploads", path: dir + "/.file", header: hdr()}
	rq.header.Set("Overwrite", "T")
	resp, err := c.send(ctx, op, rq)
	if err != nil {
		return switchboard.FilePut{}, err
	}
	discard(resp)
	res := putResult(resp)
	res.Chunked = true
	return res, nil
}

func uploadID() (string, error) {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return "switchboard-" + hex.EncodeToString(b[:]), nil
}
