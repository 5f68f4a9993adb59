package s3blob

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// EnsureBucket creates bucket unless it exists already; concurrent callers
// and repeated calls are fine. Outside us-east-1 it sends the region as the
// location constraint, as S3 requires.
func EnsureBucket(ctx context.Context, client *s3.Client, bucket string) error {
	exists, err := bucketExists(ctx, client, bucket)
	if err != nil || exists {
		return err
	}
	in := &s3.CreateBucketInput{Bucket: aws.String(bucket)}
	if region := client.Options().Region; region != "" && region != "us-east-1" {
		in.CreateBucketConfiguration = &types.CreateBucketConfiguration{
			LocationConstraint: types.BucketLocationConstraint(region),
		}
	}
	_, err = client.CreateBucket(ctx, in)
	if err == nil {
		return nil
	}
	var owned *types.BucketAlreadyOwnedByYou
	var taken *types.BucketAlreadyExists
	if errors.As(err, &owned) || errors.As(err, &taken) {
		// Someone created it in between (or, for BucketAlreadyExists, it
		// belongs to another account: then HeadBucket answers 403 below).
		if exists, herr := bucketExists(ctx, client, bucket); herr == nil && exists {
			return nil
		}
	}
	return fromS3("s3 create bucket "+bucket, err)
}

func bucketExists(ctx context.Context, client *s3.Client, bucket string) (bool, error) {
	_, err := client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(bucket)})
	if err == nil {
		return true, nil
	}
	var nf *types.NotFound
	var nsb *types.NoSuchBucket
	if errors.As(err, &nf) || errors.As(err, &nsb) {
		return false, nil
	}
	return false, fromS3("s3 head bucket "+bucket, err)
}
