// Package s3blob is the S3 adapter of switchboard.BlobStore: workspace files
// live in one bucket, under keys that shared/tools/workspace has already resolved
// and scoped. It also builds the S3 client from the environment (NewClient)
// and runs an in-process S3 server for dev mode and tests (StartFake).
package s3blob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

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
	client *s3.Client
	bucket string
}

var _ sb.BlobStore = (*Store)(nil)

// New returns a Store for bucket. The bucket must exist (EnsureBucket creates
// it in dev mode; infra/ creates it in AWS).
func New(client *s3.Client, bucket string) *Store {
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
	in := &s3.PutObjectInput{
		Bucket:        aws.String(s.bucket),
		Key:           aws.String(key),
		Body:          body,
		ContentLength: aws.Int64(size),
	}
	if contentType != "" {
		in.ContentType = aws.String(contentType)
	}
	ctx, cancel := context.WithTimeout(ctx, transferTimeout)
	defer cancel()
	if _, err := s.client.PutObject(ctx, in); err != nil {
		return fromS3(op, err)
	}
	return nil
}

// putMultipart uploads first and then the rest of r in PartSize parts.
func (s *Store) putMultipart(ctx context.Context, op, key string, first []byte, r io.Reader, size int64, contentType string) (err error) {
	create := &s3.CreateMultipartUploadInput{Bucket: aws.String(s.bucket), Key: aws.String(key)}
	if contentType != "" {
		create.ContentType = aws.String(contentType)
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	up, err := s.client.CreateMultipartUpload(cctx, create)
	cancel()
	if err != nil {
		return fromS3(op, err)
	}
	defer func() {
		if err == nil {
			return
		}
		// A fresh context: the caller's may be what failed the upload, and the
		// parts must not linger (they are billed until aborted).
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), callTimeout)
		defer cancel()
		_, abortErr := s.client.AbortMultipartUpload(actx, &s3.AbortMultipartUploadInput{
			Bucket: aws.String(s.bucket), Key: aws.String(key), UploadId: up.UploadId,
		})
		if abortErr != nil {
			err = errors.Join(err, fmt.Errorf("%s: abort multipart upload: %w", op, abortErr))
		}
	}()

	var (
		parts []types.CompletedPart
		total int64
		buf   = first
		last  bool
	)
	for part := int32(1); ; part++ {
		pctx, cancel := context.WithTimeout(ctx, transferTimeout)
		out, err := s.client.UploadPart(pctx, &s3.UploadPartInput{
			Bucket:        aws.String(s.bucket),
			Key:           aws.String(key),
			UploadId:      up.UploadId,
			PartNumber:    aws.Int32(part),
			Body:          bytes.NewReader(buf),
			ContentLength: aws.Int64(int64(len(buf))),
		})
		cancel()
		if err != nil {
			return fromS3(op, err)
		}
		parts = append(parts, types.CompletedPart{ETag: out.ETag, PartNumber: aws.Int32(part)})
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
	cctx, cancel = context.WithTimeout(ctx, callTimeout)
	defer cancel()
	_, err = s.client.CompleteMultipartUpload(cctx, &s3.CompleteMultipartUploadInput{
		Bucket:          aws.String(s.bucket),
		Key:             aws.String(key),
		UploadId:        up.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: parts},
	})
	if err != nil {
		return fromS3(op, err)
	}
	return nil
}

// Get opens key. ENOTFOUND when it does not exist, EUNAVAILABLE when S3
// throttles or fails. The caller closes the body; reading it fails once
// transferTimeout has passed since the call.
func (s *Store) Get(ctx context.Context, key string) (io.ReadCloser, sb.BlobInfo, error) {
	op := "s3 get " + key
	ctx, cancel := context.WithTimeout(ctx, transferTimeout)
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(key)})
	if err != nil {
		cancel()
		return nil, sb.BlobInfo{}, fromS3(op, err)
	}
	info := sb.BlobInfo{Key: key, Size: aws.ToInt64(out.ContentLength), Modified: aws.ToTime(out.LastModified).UTC()}
	return &cancelOnClose{ReadCloser: out.Body, cancel: cancel}, info, nil
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
	in := &s3.ListObjectsV2Input{Bucket: aws.String(s.bucket), Prefix: aws.String(prefix)}
	if limit > 0 && limit < 1000 {
		in.MaxKeys = aws.Int32(int32(limit))
	}
	var out []sb.BlobInfo
	pages := s3.NewListObjectsV2Paginator(s.client, in)
	for pages.HasMorePages() {
		pctx, cancel := context.WithTimeout(ctx, callTimeout)
		page, err := pages.NextPage(pctx)
		cancel()
		if err != nil {
			return nil, fromS3(op, err)
		}
		for _, o := range page.Contents {
			out = append(out, sb.BlobInfo{
				Key:      aws.ToString(o.Key),
				Size:     aws.ToInt64(o.Size),
				Modified: aws.ToTime(o.LastModified).UTC(),
			})
			if limit > 0 && len(out) == limit {
				return out, nil
			}
		}
	}
	return out, nil
}

// Delete removes key; a missing key is not an error (S3 answers 204 either way).
func (s *Store) Delete(ctx context.Context, key string) error {
	op := "s3 delete " + key
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if _, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(key)}); err != nil {
		return fromS3(op, err)
	}
	return nil
}

// fromS3 translates an SDK error into the domain vocabulary. The message is
// caller-safe; the SDK error stays in Err for the logs.
func fromS3(op string, err error) error {
	cause := fmt.Errorf("%s: %w", op, err)
	var api smithy.APIError
	code := ""
	if errors.As(err, &api) {
		code = api.ErrorCode()
	}
	switch {
	case code == "NoSuchBucket":
		// Not modeled for GetObject, so it comes as a generic API error.
		return sb.Wrap(op, sb.EINTERNAL, "the workspace storage is not set up (its bucket is missing); the operator has to create it", cause)
	case code == "NoSuchKey" || code == "NotFound":
		return sb.Wrap(op, sb.ENOTFOUND, "no such object", cause)
	case unavailable(err):
		return sb.Wrap(op, sb.EUNAVAILABLE, "the workspace storage is unavailable right now; try again in a minute", cause)
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) && re.HTTPStatusCode() == http.StatusNotFound && code == "" {
		// HEAD answers carry no error document, only the status.
		return sb.Wrap(op, sb.ENOTFOUND, "no such object", cause)
	}
	return sb.Wrap(op, sb.EINTERNAL, "", cause)
}

// unavailable reports whether err is worth retrying later: throttling, a 5xx,
// a connection failure or a timeout. The SDK has already retried by then.
func unavailable(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	// Refused, reset and dropped connections (smithy's RequestSendError).
	if (retry.RetryableConnectionError{}).IsErrorRetryable(err) == aws.TrueTernary {
		return true
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		code := api.ErrorCode()
		if _, ok := retry.DefaultThrottleErrorCodes[code]; ok || code == "SlowDown" || code == "ServiceUnavailable" || code == "InternalError" {
			return true
		}
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		st := re.HTTPStatusCode()
		return st == http.StatusTooManyRequests || st >= 500
	}
	return false
}
