package nextcloud_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/adapters/nextcloud"
)

// BenchmarkUpload50MB uploads 50 MiB to ncfake over loopback, once as a
// plain PUT and once as chunked upload v2 with 10 MiB chunks (5 chunk PUTs
// plus MKCOL and MOVE). MB/s comes from SetBytes. Deleting the file and
// emptying the trash between rounds is not timed.
func BenchmarkUpload50MB(b *testing.B) {
	body := randomBytes(50 << 20)
	for _, bc := range []struct {
		name string
		mode nextcloud.ChunkMode
	}{{"plain", nextcloud.ChunkNever}, {"chunked", nextcloud.ChunkAlways}} {
		b.Run(bc.name, func(b *testing.B) {
			fake, c := setup(b)
			if err := c.SetChunking(nextcloud.Chunking{Mode: bc.mode, Threshold: 10 << 20, ChunkSize: 10 << 20}); err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.SetBytes(int64(len(body)))
			for i := 0; b.Loop(); i++ {
				p := fmt.Sprintf("bench-%d.bin", i)
				res, err := c.Put(ctx, p, bytes.NewReader(body), int64(len(body)), "application/octet-stream")
				if err != nil {
					b.Fatal(err)
				}
				if res.Chunked != (bc.mode == nextcloud.ChunkAlways) {
					b.Fatalf("Chunked = %v", res.Chunked)
				}
				b.StopTimer()
				if err := c.Delete(ctx, p); err != nil {
					b.Fatal(err)
				}
				if err := c.EmptyTrash(ctx); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(fake.Calls("PUT uploads"))/float64(b.N), "chunkPUTs/op")
		})
	}
}
