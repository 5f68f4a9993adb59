package untrusted

import (
	"strings"
	"testing"
)

func BenchmarkFrame(b *testing.B) {
	text := strings.Repeat("Hello @bob, see <b>the report</b> at https://nc.example/s/abc & reply. ", 60)[:4096]
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		_ = Frame("rocketchat:#general @alice", text)
	}
}
