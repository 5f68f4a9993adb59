// Package s3blob is the S3 adapter of switchboard.BlobStore: workspace files
// live in one bucket, under keys that shared/tools/workspace has already resolved
// and scoped. It also builds the S3 client from the environment (NewClient)
// and runs an in-process S3 server for dev mode and tests (StartFake).
package s3blob

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/awssigned"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// PartSize is the multipart part size used when Put gets a body it cannot
// send in one request (unknown length, or a reader that cannot seek). Memory
// per Put is bounded by it. S3 requires at least 5 MiB for every part but the
// last.
const PartSize = 8 << 20

// Deadlines of S3 calls: a call that has not finished by then is stuck, and
// the caller gets EUNAVAILABLE instead of waiting. Transfers get longer: a
// part or a whole file of up to the 1 GiB file limit at S3's in-region
// speed. A caller's earlier deadline wins. Variables so that tests can
// shorten them.
var (
	callTimeout     = 10 * time.Second // list, delete, start/complete/abort a multipart upload
	transferTimeout = 2 * time.Minute  // one PutObject or UploadPart; a GetObject until its body is closed
)

// Store is a BlobStore over one S3 bucket.
type Store struct {
	client *Client
	bucket string
}

var _ sb.BlobStore = (*Store)(nil)

// New returns a Store for bucket. The bucket must exist (EnsureBucket creates
// it in dev mode; infra/ creates it in AWS).
func New(client *Client, bucket string) *Store {
	return &Store{client: client, bucket: bucket}
}

// Put stores r under key. With size >= 0 and an io.ReadSeeker the object goes
// up in one PutObject; otherwise Put reads up to PartSize bytes and either
// sends them in one PutObject or continues with a multipart upload, so a body
// of any length streams through with bounded memory. A failed multipart
// upload is aborted, leaving no object and no orphaned parts behind.
//
// Errors: EUNAVAILABLE when S3 throttles or fails (5xx, network), EINVALID
// when size >= 0 does not match the body, EINTERNAL otherwise.
func (s *Store) Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) error {
	op := "s3 put " + key
	if rs, ok := r.(io.ReadSeeker); ok && size >= 0 {
		return s.putOnce(ctx, op, key, rs, size, contentType)
	}
	first := make([]byte, PartSize)
	n, err := io.ReadFull(r, first)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		if size >= 0 && int64(n) != size {
			return sb.E(op, sb.EINVALID, fmt.Sprintf("body has %d bytes, %d announced", n, size))
		}
		return s.putOnce(ctx, op, key, bytes.NewReader(first[:n]), int64(n), contentType)
	case err != nil:
		return sb.Wrap(op, sb.EINTERNAL, "", fmt.Errorf("%s: read body: %w", op, err))
	}
	return s.putMultipart(ctx, op, key, first, r, size, contentType)
}

func (s *Store) putOnce(ctx context.Context, op, key string, body io.ReadSeeker, size int64, contentType string) error {
	ctx, cancel := context.WithTimeout(ctx, transferTimeout)
	defer cancel()
	resp, err := s.client.do(ctx, request{
		method: http.MethodPut, bucket: s.bucket, key: key,
		header: contentTypeHeader(contentType), body: body, size: size, withMD5: true,
	})
	if err != nil {
		return fromS3(op, err)
	}
	resp.Body.Close()
	return nil
}

func contentTypeHeader(contentType string) http.Header {
	if contentType == "" {
		return nil
	}
	return http.Header{"Content-Type": {contentType}}
}

// putMultipart uploads first and then the rest of r in PartSize parts.
func (s *Store) putMultipart(ctx context.Context, op, key string, first []byte, r io.Reader, size int64, contentType string) (err error) {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	var up struct {
		UploadID string `xml:"UploadId"`
	}
	err = s.call(cctx, request{method: http.MethodPost, bucket: s.bucket, key: key,
		query: url.Values{"uploads": {""}}, header: contentTypeHeader(contentType)}, &up)
	cancel()
	if err == nil && up.UploadID == "" {
		err = errors.New("create multipart upload: no upload id in the answer")
	}
	if err != nil {
		return fromS3(op, err)
	}
	upload := url.Values{"uploadId": {up.UploadID}}
	defer func() {
		if err == nil {
			return
		}
		// A fresh context: the caller's may be what failed the upload, and the
		// parts must not linger (they are billed until aborted).
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), callTimeout)
		defer cancel()
		abortErr := s.call(actx, request{method: http.MethodDelete, bucket: s.bucket, key: key, query: upload}, nil)
		if abortErr != nil {
			err = errors.Join(err, fmt.Errorf("%s: abort multipart upload: %w", op, abortErr))
		}
	}()

	var (
		parts []completedPart
		total int64
		buf   = first
		last  bool
	)
	for part := 1; ; part++ {
		pctx, cancel := context.WithTimeout(ctx, transferTimeout)
		resp, err := s.client.do(pctx, request{
			method: http.MethodPut, bucket: s.bucket, key: key,
			query: url.Values{"partNumber": {strconv.Itoa(part)}, "uploadId": {up.UploadID}},
			body:  bytes.NewReader(buf), size: int64(len(buf)), withMD5: true,
		})
		cancel()
		if err != nil {
			return fromS3(op, err)
		}
		resp.Body.Close()
		parts = append(parts, completedPart{ETag: resp.Header.Get("ETag"), PartNumber: part})
		total += int64(len(buf))
		if last {
			break
		}
		buf = first[:cap(first)]
		n, rerr := io.ReadFull(r, buf)
		switch {
		case rerr == io.EOF:
			last, buf = true, nil
		case rerr == io.ErrUnexpectedEOF:
			last, buf = true, buf[:n]
		case rerr != nil:
			return sb.Wrap(op, sb.EINTERNAL, "", fmt.Errorf("%s: read body: %w", op, rerr))
		}
		if last && len(buf) == 0 {
			break
		}
	}
	if size >= 0 && total != size {
		return sb.E(op, sb.EINVALID, fmt.Sprintf("body has %d bytes, %d announced", total, size))
	}
	doc := completeMultipartUpload(parts)
	cctx, cancel = context.WithTimeout(ctx, callTimeout)
	defer cancel()
	// S3 may answer 200 and still fail the completion: the error is then
	// the answer's document (call reads it as one).
	err = s.call(cctx, request{method: http.MethodPost, bucket: s.bucket, key: key, query: upload,
		body: bytes.NewReader(doc), size: int64(len(doc))}, nil)
	if err != nil {
		return fromS3(op, err)
	}
	return nil
}

type completedPart struct {
	ETag       string
	PartNumber int
}

// completeMultipartUpload is CompleteMultipartUpload's document, written
// by hand: xml.Marshal would link the whole XML encoder for these lines.
func completeMultipartUpload(parts []completedPart) []byte {
	var b bytes.Buffer
	b.WriteString(`<CompleteMultipartUpload xmlns="http://s3.amazonaws.com/doc/2006-03-01/">`)
	for _, p := range parts {
		b.WriteString("<Part><ETag>")
		_ = xml.EscapeText(&b, []byte(p.ETag))
		fmt.Fprintf(&b, "</ETag><PartNumber>%d</PartNumber></Part>", p.PartNumber)
	}
	b.WriteString("</CompleteMultipartUpload>")
	return b.Bytes()
}

// call sends r and decodes the XML answer into out (nil: none wanted). An
// answer whose document is an <Error> fails as the API error it names, as
// S3 answers a failed CompleteMultipartUpload with 200.
func (s *Store) call(ctx context.Context, r request, out any) error {
	resp, err := s.client.do(ctx, r)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return &SendError{Err: fmt.Errorf("read answer: %w", err)}
	}
	var root struct {
		XMLName xml.Name
		Code    string `xml:"Code"`
		Message string `xml:"Message"`
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	if err := xml.Unmarshal(data, &root); err != nil {
		return fmt.Errorf("decode answer: %w", err)
	}
	if root.XMLName.Local == "Error" {
		return &APIError{Status: resp.StatusCode, Code: root.Code, Message: root.Message, RequestID: resp.Header.Get("X-Amz-Request-Id")}
	}
	if out == nil {
		return nil
	}
	if err := xml.Unmarshal(data, out); err != nil {
		return fmt.Errorf("decode answer: %w", err)
	}
	return nil
}

// Get opens key. ENOTFOUND when it does not exist, EUNAVAILABLE when S3
// throttles or fails. The caller closes the body; reading it fails once
// transferTimeout has passed since the call.
func (s *Store) Get(ctx context.Context, key string) (io.ReadCloser, sb.BlobInfo, error) {
	op := "s3 get " + key
	ctx, cancel := context.WithTimeout(ctx, transferTimeout)
	// identity: Go's transport would otherwise ask for gzip and unpack an
	// object stored gzip-encoded, losing its length (the SDK asks the same).
	resp, err := s.client.do(ctx, request{method: http.MethodGet, bucket: s.bucket, key: key,
		header: http.Header{"Accept-Encoding": {"identity"}}})
	if err != nil {
		cancel()
		return nil, sb.BlobInfo{}, fromS3(op, err)
	}
	info := sb.BlobInfo{Key: key, Size: max(resp.ContentLength, 0)}
	if t, err := http.ParseTime(resp.Header.Get("Last-Modified")); err == nil {
		info.Modified = t.UTC()
	}
	return &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}, info, nil
}

// cancelOnClose ends the call's deadline when the body is closed (the body
// is read after GetObject returns, so the deadline cannot end there).
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// List returns the objects under prefix sorted by key (S3 lists in UTF-8
// binary order), at most limit of them; limit <= 0 means all.
func (s *Store) List(ctx context.Context, prefix string, limit int) ([]sb.BlobInfo, error) {
	op := "s3 list " + prefix
	query := url.Values{"list-type": {"2"}, "prefix": {prefix}}
	if limit > 0 && limit < 1000 {
		query.Set("max-keys", strconv.Itoa(limit))
	}
	var out []sb.BlobInfo
	for {
		var page listBucketResult
		pctx, cancel := context.WithTimeout(ctx, callTimeout)
		err := s.call(pctx, request{method: http.MethodGet, bucket: s.bucket, query: query}, &page)
		cancel()
		if err != nil {
			return nil, fromS3(op, err)
		}
		for _, o := range page.Contents {
			out = append(out, sb.BlobInfo{Key: o.Key, Size: o.Size, Modified: o.LastModified.UTC()})
			if limit > 0 && len(out) == limit {
				return out, nil
			}
		}
		if !page.IsTruncated || page.NextContinuationToken == "" {
			return out, nil
		}
		query.Set("continuation-token", page.NextContinuationToken)
	}
}

// listBucketResult is one page of ListObjectsV2.
type listBucketResult struct {
	IsTruncated           bool   `xml:"IsTruncated"`
	NextContinuationToken string `xml:"NextContinuationToken"`
	Contents              []struct {
		Key          string    `xml:"Key"`
		Size         int64     `xml:"Size"`
		LastModified time.Time `xml:"LastModified"`
	} `xml:"Contents"`
}

// Delete removes key; a missing key is not an error (S3 answers 204 either way).
func (s *Store) Delete(ctx context.Context, key string) error {
	op := "s3 delete " + key
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if err := s.call(ctx, request{method: http.MethodDelete, bucket: s.bucket, key: key}, nil); err != nil {
		return fromS3(op, err)
	}
	return nil
}

// fromS3 translates a client error into the domain vocabulary. The
// message is caller-safe; the client's error stays in Err for the logs.
func fromS3(op string, err error) error {
	cause := fmt.Errorf("%s: %w", op, err)
	var api *APIError
	code := ""
	if errors.As(err, &api) {
		code = api.Code
	}
	switch {
	case code == "NoSuchBucket":
		return sb.Wrap(op, sb.EINTERNAL, "the workspace storage is not set up (its bucket is missing); the operator has to create it", cause)
	case code == "NoSuchKey" || code == "NotFound":
		return sb.Wrap(op, sb.ENOTFOUND, "no such object", cause)
	case unavailable(err):
		return sb.Wrap(op, sb.EUNAVAILABLE, "the workspace storage is unavailable right now; try again in a minute", cause)
	}
	if api != nil && api.Status == http.StatusNotFound && code == "" {
		// HEAD answers carry no error document, only the status.
		return sb.Wrap(op, sb.ENOTFOUND, "no such object", cause)
	}
	return sb.Wrap(op, sb.EINTERNAL, "", cause)
}

// unavailable reports whether err is worth retrying later: throttling, a 5xx,
// a connection failure or a timeout. The client has already retried by then.
func unavailable(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var se *SendError
	if errors.As(err, &se) {
		return !errors.Is(err, context.Canceled)
	}
	var api *APIError
	if errors.As(err, &api) {
		return awssigned.Throttling(api.Code) || api.Code == "ServiceUnavailable" || api.Code == "InternalError" ||
			api.Status == http.StatusTooManyRequests || api.Status >= 500
	}
	return false
}
