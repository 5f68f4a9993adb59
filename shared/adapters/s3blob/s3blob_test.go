package s3blob_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/s3blob"
	"github.com/switchboard-dev/switchboard/shared/adapters/s3blob/s3fake"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

const bucket = "switchboard-test"

// localEnv points the SDK at endpoint the way dev mode does, with no
// credentials and no region configured, and no shared config files.
func localEnv(t *testing.T, endpoint string) {
	t.Helper()
	for _, k := range []string{
		"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
		"AWS_DEFAULT_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL",
		"AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS",
	} {
		t.Setenv(k, "")
	}
	dir := t.TempDir()
	t.Setenv("AWS_CONFIG_FILE", dir+"/config")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", dir+"/credentials")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_ENDPOINT_URL_S3", endpoint)
}

// newStore starts a fresh fake (memory, or bolt under dir) with the bucket.
func newStore(t *testing.T, dir string) (*s3blob.Store, *s3blob.Client) {
	t.Helper()
	endpoint, stop, err := s3fake.StartFake(dir)
	if err != nil {
		t.Fatalf("StartFake: %v", err)
	}
	t.Cleanup(stop)
	localEnv(t, endpoint)
	ctx := context.Background()
	client, err := s3blob.NewClient(ctx)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	if err := s3blob.EnsureBucket(ctx, client, bucket); err != nil {
		t.Fatalf("EnsureBucket: %v", err)
	}
	return s3blob.New(client, bucket), client
}

func get(t *testing.T, s *s3blob.Store, key string) (string, sb.BlobInfo) {
	t.Helper()
	rc, info, err := s.Get(context.Background(), key)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("read %q: %v", key, err)
	}
	return string(b), info
}

func TestPutGetListDelete(t *testing.T) {
	for _, backend := range []string{"memory", "bolt"} {
		t.Run(backend, func(t *testing.T) {
			dir := ""
			if backend == "bolt" {
				dir = t.TempDir()
			}
			s, _ := newStore(t, dir)
			ctx := context.Background()
			before := time.Now().Add(-time.Minute)

			if err := s.Put(ctx, "a/one.txt", strings.NewReader("hello"), 5, "text/plain"); err != nil {
				t.Fatalf("Put: %v", err)
			}
			got, info := get(t, s, "a/one.txt")
			if got != "hello" {
				t.Errorf("content = %q, want %q", got, "hello")
			}
			if info.Key != "a/one.txt" || info.Size != 5 || info.Modified.Before(before) {
				t.Errorf("info = %+v, want key a/one.txt, size 5, recent", info)
			}

			// overwrite
			if err := s.Put(ctx, "a/one.txt", strings.NewReader("bye"), 3, ""); err != nil {
				t.Fatalf("Put overwrite: %v", err)
			}
			if got, _ := get(t, s, "a/one.txt"); got != "bye" {
				t.Errorf("after overwrite = %q, want bye", got)
			}

			// a key and a "folder" of the same name coexist
			if err := s.Put(ctx, "a", strings.NewReader("x"), 1, ""); err != nil {
				t.Fatalf("Put a: %v", err)
			}
			list, err := s.List(ctx, "a", 0)
			if err != nil {
				t.Fatalf("List: %v", err)
			}
			if keys := keysOf(list); keys != "a,a/one.txt" {
				t.Errorf("List(a) = %s, want a,a/one.txt", keys)
			}

			if err := s.Delete(ctx, "a/one.txt"); err != nil {
				t.Fatalf("Delete: %v", err)
			}
			if _, _, err := s.Get(ctx, "a/one.txt"); sb.ErrorCode(err) != sb.ENOTFOUND {
				t.Errorf("Get after delete: code %q (%v), want %q", sb.ErrorCode(err), err, sb.ENOTFOUND)
			}
			if err := s.Delete(ctx, "a/one.txt"); err != nil {
				t.Errorf("Delete of a missing key = %v, want nil", err)
			}
		})
	}
}

func TestBoltPersistsAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	endpoint, stop, err := s3fake.StartFake(dir)
	if err != nil {
		t.Fatal(err)
	}
	localEnv(t, endpoint)
	ctx := context.Background()
	client, err := s3blob.NewClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s3blob.EnsureBucket(ctx, client, bucket); err != nil {
		t.Fatal(err)
	}
	if err := s3blob.New(client, bucket).Put(ctx, "k", strings.NewReader("kept"), 4, ""); err != nil {
		t.Fatal(err)
	}

	// The file is locked while the first server runs.
	if _, _, err := s3fake.StartFake(dir); err == nil {
		t.Error("second StartFake on a dir in use: want an error")
	}
	stop()
	stop() // idempotent

	s, _ := newStore(t, dir)
	if got, _ := get(t, s, "k"); got != "kept" {
		t.Errorf("after restart = %q, want kept", got)
	}
}

func TestGetMissing(t *testing.T) {
	s, _ := newStore(t, "")
	_, _, err := s.Get(context.Background(), "nope/missing.md")
	if sb.ErrorCode(err) != sb.ENOTFOUND {
		t.Fatalf("code = %q (%v), want %q", sb.ErrorCode(err), err, sb.ENOTFOUND)
	}
	if !strings.HasPrefix(err.Error(), "s3 get nope/missing.md: ") {
		t.Errorf("error %q does not say where", err)
	}
}

// onlyReader hides any Seek method so that Put must stream.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

func TestLargeObjectStreams(t *testing.T) {
	s, _ := newStore(t, "")
	ctx := context.Background()
	const size = 10 << 20
	data := make([]byte, size+12345) // not a multiple of the part size
	for i := range data {
		data[i] = byte(i*7 + i/1000)
	}
	want := sha256.Sum256(data)

	tests := []struct {
		name string
		r    io.Reader
		size int64
	}{
		{"seekable, known size", bytes.NewReader(data), int64(len(data))},
		{"stream, unknown size", onlyReader{bytes.NewReader(data)}, -1},
		{"stream, known size", onlyReader{bytes.NewReader(data)}, int64(len(data))},
		{"stream, exactly one part", onlyReader{bytes.NewReader(data[:s3blob.PartSize])}, -1},
		{"stream, two full parts", onlyReader{bytes.NewReader(append(data[:s3blob.PartSize:s3blob.PartSize], data[:s3blob.PartSize]...))}, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := "big/" + strings.ReplaceAll(tt.name, " ", "")
			if err := s.Put(ctx, key, tt.r, tt.size, "application/octet-stream"); err != nil {
				t.Fatalf("Put: %v", err)
			}
			rc, info, err := s.Get(ctx, key)
			if err != nil {
				t.Fatalf("Get: %v", err)
			}
			defer rc.Close()
			h := sha256.New()
			n, err := io.Copy(h, rc)
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			wantLen := int64(len(data))
			switch tt.name {
			case "stream, exactly one part":
				wantLen = s3blob.PartSize
			case "stream, two full parts":
				wantLen = 2 * s3blob.PartSize
			}
			if n != wantLen || info.Size != wantLen {
				t.Fatalf("got %d bytes, info.Size %d, want %d", n, info.Size, wantLen)
			}
			if wantLen == int64(len(data)) && !bytes.Equal(h.Sum(nil), want[:]) {
				t.Error("content differs from what was put")
			}
		})
	}
}

func TestPutSizeMismatch(t *testing.T) {
	s, _ := newStore(t, "")
	ctx := context.Background()
	err := s.Put(ctx, "short", onlyReader{strings.NewReader("abc")}, 10, "")
	if sb.ErrorCode(err) != sb.EINVALID {
		t.Errorf("short body: code %q (%v), want %q", sb.ErrorCode(err), err, sb.EINVALID)
	}
	big := bytes.Repeat([]byte("x"), s3blob.PartSize+10)
	err = s.Put(ctx, "long", onlyReader{bytes.NewReader(big)}, s3blob.PartSize+5, "")
	if sb.ErrorCode(err) != sb.EINVALID {
		t.Errorf("long body: code %q (%v), want %q", sb.ErrorCode(err), err, sb.EINVALID)
	}
	if _, _, err := s.Get(ctx, "long"); sb.ErrorCode(err) != sb.ENOTFOUND {
		t.Errorf("failed multipart left an object behind: %v", err)
	}
}

func TestListPrefixAndLimit(t *testing.T) {
	s, _ := newStore(t, "")
	ctx := context.Background()
	var all []string
	for i := range 25 {
		all = append(all, fmt.Sprintf("p/%02d.txt", i))
	}
	all = append(all, "p2/x", "q/y", "p/sub/z")
	for _, k := range all {
		if err := s.Put(ctx, k, strings.NewReader(k), int64(len(k)), ""); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name   string
		prefix string
		limit  int
		want   int
		first  string
		last   string
	}{
		{"all under p/", "p/", 0, 26, "p/00.txt", "p/sub/z"},
		{"limit 5", "p/", 5, 5, "p/00.txt", "p/04.txt"},
		{"limit above count", "p/", 100, 26, "p/00.txt", "p/sub/z"},
		{"bare prefix matches siblings", "p", 0, 27, "p/00.txt", "p2/x"},
		{"whole bucket", "", 0, 28, "p/00.txt", "q/y"},
		{"nothing", "zzz/", 10, 0, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.List(ctx, tt.prefix, tt.limit)
			if err != nil {
				t.Fatalf("List: %v", err)
			}
			if len(got) != tt.want {
				t.Fatalf("len = %d, want %d (%s)", len(got), tt.want, keysOf(got))
			}
			if tt.want == 0 {
				return
			}
			if got[0].Key != tt.first || got[len(got)-1].Key != tt.last {
				t.Errorf("first/last = %s/%s, want %s/%s", got[0].Key, got[len(got)-1].Key, tt.first, tt.last)
			}
			for i := 1; i < len(got); i++ {
				if got[i-1].Key >= got[i].Key {
					t.Errorf("not sorted at %d: %s >= %s", i, got[i-1].Key, got[i].Key)
				}
			}
			if got[0].Size != int64(len(got[0].Key)) {
				t.Errorf("size of %s = %d, want %d", got[0].Key, got[0].Size, len(got[0].Key))
			}
		})
	}
}

func TestListPaginates(t *testing.T) {
	s, _ := newStore(t, "")
	ctx := context.Background()
	for i := range 1005 {
		k := fmt.Sprintf("many/%04d", i)
		if err := s.Put(ctx, k, strings.NewReader(""), 0, ""); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.List(ctx, "many/", 0)
	if err != nil || len(got) != 1005 {
		t.Fatalf("List all = %d, %v; want 1005", len(got), err)
	}
	got, err = s.List(ctx, "many/", 1002)
	if err != nil || len(got) != 1002 || got[1001].Key != "many/1001" {
		t.Fatalf("List 1002 = %d, %v; want 1002 ending at many/1001", len(got), err)
	}
}

func TestEnsureBucketIdempotent(t *testing.T) {
	_, client := newStore(t, "")
	ctx := context.Background()
	for range 2 {
		if err := s3blob.EnsureBucket(ctx, client, bucket); err != nil {
			t.Fatalf("EnsureBucket again: %v", err)
		}
	}
	if err := s3blob.EnsureBucket(ctx, client, "Bad_Name"); err == nil {
		t.Error("EnsureBucket with an invalid name: want an error")
	}
}

func TestMissingBucket(t *testing.T) {
	_, client := newStore(t, "")
	s := s3blob.New(client, "no-such-bucket")
	_, _, err := s.Get(context.Background(), "k")
	if code := sb.ErrorCode(err); code == sb.ENOTFOUND || code == "" {
		t.Errorf("Get in a missing bucket: code %q (%v); a missing bucket is not a missing file", code, err)
	}
	if strings.Contains(sb.ErrorMessage(err), "no-such-bucket") {
		t.Errorf("caller-safe message leaks the bucket name: %q", sb.ErrorMessage(err))
	}
}

// TestErrorMapping runs the adapter against a server that answers like S3
// does when it throttles or fails.
func TestErrorMapping(t *testing.T) {
	tests := []struct {
		name   string
		status int
		code   string
		want   string
	}{
		{"slow down", 503, "SlowDown", sb.EUNAVAILABLE},
		{"internal error", 500, "InternalError", sb.EUNAVAILABLE},
		{"throttling 400", 400, "Throttling", sb.EUNAVAILABLE},
		{"too many requests", 429, "TooManyRequests", sb.EUNAVAILABLE},
		{"no such key", 404, "NoSuchKey", sb.ENOTFOUND},
		{"access denied", 403, "AccessDenied", sb.EINTERNAL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/xml")
				w.WriteHeader(tt.status)
				fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>m</Message><RequestId>r</RequestId></Error>`, tt.code)
			}))
			t.Cleanup(srv.Close)
			localEnv(t, srv.URL)
			t.Setenv("AWS_MAX_ATTEMPTS", "1")
			client, err := s3blob.NewClient(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = s3blob.New(client, bucket).Get(context.Background(), "k")
			if got := sb.ErrorCode(err); got != tt.want {
				t.Errorf("code = %q (%v), want %q", got, err, tt.want)
			}
			if !strings.HasPrefix(err.Error(), "s3 get k: ") {
				t.Errorf("error %q does not say where", err)
			}
		})
	}

	t.Run("connection refused", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		url := srv.URL
		srv.Close()
		localEnv(t, url)
		t.Setenv("AWS_MAX_ATTEMPTS", "1")
		client, err := s3blob.NewClient(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		err = s3blob.New(client, bucket).Delete(context.Background(), "k")
		if got := sb.ErrorCode(err); got != sb.EUNAVAILABLE {
			t.Errorf("code = %q (%v), want %q", got, err, sb.EUNAVAILABLE)
		}
		var e *sb.Error
		if !errors.As(err, &e) || e.Op != "s3 delete k" {
			t.Errorf("op of %v, want s3 delete k", err)
		}
	})
}

func keysOf(list []sb.BlobInfo) string {
	keys := make([]string, len(list))
	for i, b := range list {
		keys[i] = b.Key
	}
	return strings.Join(keys, ",")
}

// Keys with spaces, plus signs, percent signs and non-ASCII letters are
// signed, stored, listed and read back under exactly that key.
func TestOddKeysRoundTrip(t *testing.T) {
	s, _ := newStore(t, "")
	ctx := context.Background()
	keys := []string{"a b/c+d.txt", "100%/ü ñ.csv", "x/(1)&[2]=~'.md"}
	for _, key := range keys {
		if err := s.Put(ctx, key, strings.NewReader(key), int64(len(key)), "text/plain"); err != nil {
			t.Fatalf("Put(%q): %v", key, err)
		}
		if got, _ := get(t, s, key); got != key {
			t.Errorf("Get(%q) = %q", key, got)
		}
	}
	list, err := s.List(ctx, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := keysOf(list), "100%/ü ñ.csv,a b/c+d.txt,x/(1)&[2]=~'.md"; got != want {
		t.Errorf("List = %q, want %q", got, want)
	}
}

// A PUT that S3 fails with a 500 is sent again, whole, with the same
// Content-MD5, and the second answer counts.
func TestFailedPutIsRetriedWithTheWholeBody(t *testing.T) {
	var bodies []string
	var md5s []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, string(b))
		md5s = append(md5s, r.Header.Get("Content-MD5"))
		if len(bodies) == 1 {
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, `<Error><Code>InternalError</Code><Message>m</Message></Error>`)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	localEnv(t, srv.URL)
	client, err := s3blob.NewClient(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := s3blob.New(client, bucket).Put(context.Background(), "k", strings.NewReader("hello"), 5, ""); err != nil {
		t.Fatalf("Put: %v", err)
	}
	if len(bodies) != 2 || bodies[0] != "hello" || bodies[1] != "hello" {
		t.Errorf("bodies sent = %q, want hello twice", bodies)
	}
	if md5s[0] == "" || md5s[0] != md5s[1] {
		t.Errorf("Content-MD5 = %q, want the same digest on both attempts", md5s)
	}
}
