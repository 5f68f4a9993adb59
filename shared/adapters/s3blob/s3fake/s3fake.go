// Package s3fake runs an S3-compatible server (gofakes3) in this process
// for dev mode and tests. It lives apart from s3blob so that no Lambda
// binary links the server, bbolt or mgo/bson.
package s3fake

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3bolt"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	bolt "go.etcd.io/bbolt"

	"github.com/switchboard-dev/switchboard/shared/adapters/s3blob"
)

// FakeDBFile is the bolt file StartFake keeps under its dir.
const FakeDBFile = "s3.bolt"

// StartFake runs an S3-compatible server (gofakes3) in this process on
// 127.0.0.1 and a free port, for dev mode and tests. With dir != "" objects
// persist in dir/FakeDBFile (gofakes3's s3bolt backend: one bolt file, so keys
// like "a" and "a/b" can coexist, which the s3afero directory backend cannot
// hold); with dir == "" they live in memory (s3mem). Point the SDK at it with
// AWS_ENDPOINT_URL_S3=endpoint and build the client with NewClient.
//
// stop shuts the server down and closes the bolt file; it is safe to call
// more than once. A second StartFake on a dir that is in use fails after a
// second instead of waiting for the file lock.
func StartFake(dir string) (endpoint string, stop func(), err error) {
	return StartFakeAt("127.0.0.1:0", dir)
}

// StartFakeAt is StartFake on a fixed address (the dev runtime's
// 127.0.0.1:8702, so that CLI verbs can find the S3 of a running dev).
func StartFakeAt(addr, dir string) (endpoint string, stop func(), err error) {
	var (
		backend gofakes3.Backend
		db      *bolt.DB
	)
	if dir == "" {
		backend = s3mem.New()
	} else {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", nil, fmt.Errorf("s3 fake: create %s: %w", dir, err)
		}
		path := filepath.Join(dir, FakeDBFile)
		db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
		if err != nil {
			return "", nil, fmt.Errorf("s3 fake: open %s: %w", path, err)
		}
		backend = s3bolt.New(db)
	}
	closeDB := func() {
		if db != nil {
			_ = db.Close()
		}
	}

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		closeDB()
		return "", nil, fmt.Errorf("s3 fake: listen: %w", err)
	}
	srv := &http.Server{
		Handler:           gofakes3.New(backend).Server(),
		ReadHeaderTimeout: 10 * time.Second,
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln) // returns http.ErrServerClosed after Close
	}()

	var once sync.Once
	stop = func() {
		once.Do(func() {
			_ = srv.Close()
			<-done
			closeDB()
		})
	}
	return "http://" + ln.Addr().String(), stop, nil
}

// NewStore starts an in-memory fake and returns a workspace store on a new
// bucket in it, with a client that has static credentials and its own
// endpoint (the environment is not read or changed, so tests may run in
// parallel). stop shuts the fake down.
func NewStore(bucket string) (store *s3blob.Store, stop func(), err error) {
	endpoint, stop, err := StartFake("")
	if err != nil {
		return nil, nil, err
	}
	client := s3blob.NewClientFromConfig(aws.Config{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
	})
	if err := s3blob.EnsureBucket(context.Background(), client, bucket); err != nil {
		stop()
		return nil, nil, fmt.Errorf("s3fake: bucket %s: %w", bucket, err)
	}
	return s3blob.New(client, bucket), stop, nil
}

// T is the part of testing.TB that StoreFor uses (so that this package,
// which dev mode links, does not import testing).
type T interface {
	Helper()
	Fatalf(format string, args ...any)
	Cleanup(func())
}

// StoreFor is NewStore for a test: the fake stops when the test ends, and
// a fake that cannot start fails the test.
func StoreFor(t T, bucket string) *s3blob.Store {
	t.Helper()
	blobs, stop, err := NewStore(bucket)
	if err != nil {
		t.Fatalf("s3fake: %v", err)
	}
	t.Cleanup(stop)
	return blobs
}
