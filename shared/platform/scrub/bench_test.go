package scrub

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
)

// benchText is about 4 KB of log-like text with each of the ten configured
// secrets and a few patterns planted in it.
func benchText() string {
	var b strings.Builder
	for i := 0; b.Len() < 4096; i++ {
		fmt.Fprintf(&b, "2024-05-01T10:%02d:00Z INFO run=%08x agent=alice tool=RocketChat action=send_message room=general duration=%dms text=%q\n",
			i%60, i*7919, i*3, "Hello team, the weekly report is uploaded to /Reports/2024/week-18.pdf")
		if i%3 == 0 {
			fmt.Fprintf(&b, "  detail secret=%s url=https://bob:pw%d@nc.example/remote.php token=abc%d\n", configured[i%len(configured)], i, i)
		}
	}
	return b.String()[:4096]
}

func BenchmarkScrub(b *testing.B) {
	s := New(configured)
	text := benchText()
	clean := strings.Repeat("2024-05-01T10:00:00Z INFO run=1 agent=alice tool=RocketChat action=list_rooms ok\n", 52)[:4096]
	doc, _ := json.Marshal(map[string]any{"text": text, "room": "general", "token": configured[0]})

	b.Run("text-4KB-10-secrets", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			_ = s.String(text)
		}
	})
	b.Run("clean-4KB", func(b *testing.B) {
		b.SetBytes(int64(len(clean)))
		for b.Loop() {
			_ = s.String(clean)
		}
	})
	b.Run("json-4KB", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			_ = s.JSON(doc)
		}
	})
	b.Run("slog-record", func(b *testing.B) {
		log := slog.New(NewHandler(slog.NewJSONHandler(io.Discard, nil), s))
		for b.Loop() {
			log.Info("tool call", "agent", "alice", "tool", "RocketChat", "args", json.RawMessage(`{"room":"general","text":"hi"}`), "token", configured[1])
		}
	})
}
