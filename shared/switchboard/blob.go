package switchboard

import (
	"context"
	"io"
	"time"
)

// BlobInfo describes one stored object.
type BlobInfo struct {
	Key      string    `json:"key"`
	Size     int64     `json:"size"`
	Modified time.Time `json:"modified"`
}

// BlobStore holds workspace files (S3 in AWS, an in-process S3 server in dev).
// Keys are already resolved and scoped by the caller (shared/tools/workspace).
type BlobStore interface {
	// Put stores r under key. size is the exact length or -1 when unknown.
	Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) error
	// Get opens key; ENOTFOUND when it does not exist. The caller closes it.
	Get(ctx context.Context, key string) (io.ReadCloser, BlobInfo, error)
	// List returns objects under prefix, at most limit, sorted by key.
	List(ctx context.Context, prefix string, limit int) ([]BlobInfo, error)
	// Delete removes key; deleting a missing key is not an error.
	Delete(ctx context.Context, key string) error
}
