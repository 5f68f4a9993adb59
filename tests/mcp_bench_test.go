package tests

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkMCPLatency measures, in one run against one dev binary, MCP's
// tools/list and tools/call (the Go SDK's client, stateless 2026-07-28: one
// HTTP request each) against GET /tools and POST /tools/invoke, the same
// read of one workspace file, interleaved so that a busy machine slows all
// alike. MCP_BENCH_ROUNDS sets the rounds (default 200).
//
//	go test ./tests -run '^$' -bench MCPLatency -benchtime 1x
func BenchmarkMCPLatency(b *testing.B) {
	rounds := 200
	if n, err := strconv.Atoi(os.Getenv("MCP_BENCH_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	_, d := startMCPWorld(b)
	s := mcpSession(b, d, mcpLaptopToken)
	ctx := context.Background()
	d.invoke("hermes", "Workspace", "write", map[string]any{"path": "personal:bench.md", "content": "a file to read"})
	kinds := []struct {
		name string
		run  func() error
	}{
		{"GET /tools", func() error {
			if st, _, _ := d.do("GET", "/tools?agent=hermes", toolToken, nil); st != 200 {
				return fmt.Errorf("status %d", st)
			}
			return nil
		}},
		{"POST /tools/invoke", func() error {
			if st, m := d.invoke("hermes", "Workspace", "read", map[string]any{"path": "personal:bench.md"}); st != 200 || m["status"] != "ok" {
				return fmt.Errorf("status %d %v", st, m)
			}
			return nil
		}},
		{"mcp tools/list", func() error { _, err := s.ListTools(ctx, nil); return err }},
		{"mcp tools/call", func() error {
			res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "Workspace__read", Arguments: map[string]any{"path": "personal:bench.md"}})
			if err == nil && res.IsError {
				err = fmt.Errorf("isError: %v", res.Content)
			}
			return err
		}},
	}
	lat := make([][]float64, len(kinds))
	for b.Loop() {
		for range rounds {
			for i, k := range kinds {
				start := time.Now()
				if err := k.run(); err != nil {
					b.Fatalf("%s: %v", k.name, err)
				}
				lat[i] = append(lat[i], float64(time.Since(start).Microseconds())/1000)
			}
		}
	}
	b.Logf("%-20s %8s %8s  (%d rounds, interleaved)", "request", "p50 ms", "p90 ms", rounds)
	for i, k := range kinds {
		slices.Sort(lat[i])
		p50, p90 := lat[i][len(lat[i])/2], lat[i][len(lat[i])*9/10]
		b.Logf("%-20s %8.2f %8.2f", k.name, p50, p90)
		b.ReportMetric(p50, fmt.Sprintf("%s-p50-ms", slug(k.name)))
	}
}

func slug(s string) string {
	out := []rune{}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			out = append(out, r)
		case r >= 'A' && r <= 'Z':
			out = append(out, r+'a'-'A')
		case len(out) > 0 && out[len(out)-1] != '-':
			out = append(out, '-')
		}
	}
	return string(out)
}
