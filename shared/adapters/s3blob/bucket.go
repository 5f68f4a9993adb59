package s3blob

import (
	"context"
	"errors"
	"net/http"
	"strings"
)

// EnsureBucket creates bucket unless it exists already; concurrent callers
// and repeated calls are fine. Outside us-east-1 it sends the region as the
// location constraint, as S3 requires.
func EnsureBucket(ctx context.Context, client *Client, bucket string) error {
	exists, err := bucketExists(ctx, client, bucket)
	if err != nil || exists {
		return err
	}
	r := request{method: http.MethodPut, bucket: bucket}
	if region := client.region; region != "" && region != "us-east-1" {
		doc := `<CreateBucketConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><LocationConstraint>` +
			region + `</LocationConstraint></CreateBucketConfiguration>`
		r.body, r.size = strings.NewReader(doc), int64(len(doc))
	}
	resp, err := client.do(ctx, r)
	if err == nil {
		resp.Body.Close()
		return nil
	}
	var api *APIError
	if errors.As(err, &api) && (api.Code == "BucketAlreadyOwnedByYou" || api.Code == "BucketAlreadyExists") {
		// Someone created it in between (or, for BucketAlreadyExists, it
		// belongs to another account: then HeadBucket answers 403 below).
		if exists, herr := bucketExists(ctx, client, bucket); herr == nil && exists {
			return nil
		}
	}
	return fromS3("s3 create bucket "+bucket, err)
}

func bucketExists(ctx context.Context, client *Client, bucket string) (bool, error) {
	resp, err := client.do(ctx, request{method: http.MethodHead, bucket: bucket})
	if err == nil {
		resp.Body.Close()
		return true, nil
	}
	var api *APIError
	if errors.As(err, &api) && (api.Status == http.StatusNotFound || api.Code == "NoSuchBucket") {
		return false, nil
	}
	return false, fromS3("s3 head bucket "+bucket, err)
}
