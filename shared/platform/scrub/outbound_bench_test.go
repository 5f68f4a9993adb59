package scrub

import (
	"context"
	"strings"
	"testing"
)

// BenchmarkOutbound is the cost each outbound message pays at the client
// boundary, with the ten configured secrets of plant_test.go (an instance
// with several agents holds about that many).
func BenchmarkOutbound(b *testing.B) {
	s := New(configured)
	chat := "Hermes: the Q3 report is uploaded to /Reports/2024/Q3.pdf; revenue is up 4 % and the two open invoices (aBcD2345EfGh6789j) are paid."
	leaky := chat + " My key is " + configured[0] + " and https://bob:pw@nc.example/x"
	long := strings.Repeat(chat+"\n", 4096/len(chat))
	link := "https://sb.example/approvals/01HZX3K9Q2W8E7R6T5Y4U3I2O1?decision=approve&token=Xq0AAAAAZ2Vfc2lnbmF0dXJlLWJ5dGVzLWhlcmUtMTIzNDU2Nzg5MA"
	approval := "Hermes wants to run Workspace.delete\nwith {\"path\":\"personal:old.md\"}\nWhy: cleanup\n\nApprove: " + link + "\nDeny: " + strings.Replace(link, "approve", "deny", 1)
	ctx := Allow(context.Background(), link, strings.Replace(link, "approve", "deny", 1))
	for _, c := range []struct {
		name string
		ctx  context.Context
		text string
	}{
		{"chat-130B-clean", context.Background(), chat},
		{"chat-200B-two-secrets", context.Background(), leaky},
		{"telegram-max-4KB-clean", context.Background(), long},
		{"approval-request-with-allowed-links", ctx, approval},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.text)))
			b.ReportAllocs()
			for b.Loop() {
				_ = s.StringContext(c.ctx, c.text)
			}
		})
	}
}
