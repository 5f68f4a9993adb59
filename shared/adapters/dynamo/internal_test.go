package dynamo

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/awssigned"
	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/ddb"
	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

func TestTimeKeyIsFixedWidthAndSortsByTime(t *testing.T) {
	cet := time.FixedZone("CET", 3600)
	times := []time.Time{
		time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 1, 1, 0, 0, 0, 1, time.UTC),
		time.Date(2026, 1, 1, 0, 0, 0, 100_000_000, time.UTC),
		time.Date(2026, 1, 1, 1, 0, 0, 90_000_000, cet), // = 00:00:00.09 UTC
		time.Date(2026, 1, 1, 0, 0, 1, 0, time.UTC),
		time.Date(2026, 12, 31, 23, 59, 59, 999_999_999, time.UTC),
	}
	keys := make([]string, len(times))
	for i, tm := range times {
		keys[i] = timeKey(tm)
		if len(keys[i]) != len(timeLayout) {
			t.Errorf("timeKey(%v) = %q: %d chars, want %d", tm, keys[i], len(keys[i]), len(timeLayout))
		}
	}
	sorted := append([]string(nil), keys...)
	sort.Strings(sorted)
	byTime := append([]time.Time(nil), times...)
	sort.Slice(byTime, func(i, j int) bool { return byTime[i].Before(byTime[j]) })
	for i := range byTime {
		if sorted[i] != timeKey(byTime[i]) {
			t.Fatalf("string order %v differs from time order at %d", sorted, i)
		}
	}
	if got, want := keys[3], "2026-01-01T00:00:00.090000000Z"; got != want {
		t.Errorf("timeKey in CET = %q, want %q", got, want)
	}
}

func TestKeys(t *testing.T) {
	at := time.Date(2026, 2, 3, 4, 5, 6, 7, time.UTC)
	tests := []struct {
		name           string
		gotPK, gotSK   string
		wantPK, wantSK string
	}{
		{"audit", first(auditKey("alice", at, "id1")), second(auditKey("alice", at, "id1")),
			"alice", "2026-02-03T04:05:06.000000007Z#id1"},
		{"receipt", first(receiptKey("bob", at, "run1")), second(receiptKey("bob", at, "run1")),
			"bob", "2026-02-03T04:05:06.000000007Z#run1"},
		{"job", first(jobKey("heartbeat")), second(jobKey("heartbeat")), "job", "heartbeat"},
		{"marker", first(markerKey("rc:m1")), second(markerKey("rc:m1")), "marker#rc:m1", "-"},
		{"counter", first(counterKey("wake:r1")), second(counterKey("wake:r1")), "counter#wake:r1", "-"},
		{"kv", first(kvKey("poll:rc")), second(kvKey("poll:rc")), "kv#poll:rc", "-"},
		{"lease", first(leaseKey("agent:alice")), second(leaseKey("agent:alice")), "lease#agent:alice", "-"},
	}
	for _, tt := range tests {
		if tt.gotPK != tt.wantPK || tt.gotSK != tt.wantSK {
			t.Errorf("%s key = %q/%q, want %q/%q", tt.name, tt.gotPK, tt.gotSK, tt.wantPK, tt.wantSK)
		}
	}
}

func first(a, _ string) string  { return a }
func second(_, b string) string { return b }

func TestMapErr(t *testing.T) {
	answer := func(status int, code string) error { return &ddb.Error{Status: status, Code: code, Message: "no"} }
	tests := []struct {
		name    string
		err     error
		want    string
		wantMsg string
	}{
		{"nil", nil, "", ""},
		{"condition failed", answer(400, ddb.ConditionalCheckFailed), switchboard.ECONFLICT, "already recorded"},
		{"wrapped condition failed", fmt.Errorf("op: %w", answer(400, ddb.ConditionalCheckFailed)), switchboard.ECONFLICT, ""},
		{"missing table", answer(400, ddb.ResourceNotFound), switchboard.EINTERNAL, "table tbl is missing; run make dev or cdk deploy"},
		{"throughput", answer(400, "ProvisionedThroughputExceededException"), switchboard.EUNAVAILABLE, "try again"},
		{"request limit", answer(400, "RequestLimitExceeded"), switchboard.EUNAVAILABLE, ""},
		{"throttling", answer(400, "ThrottlingException"), switchboard.EUNAVAILABLE, ""},
		{"internal server error", answer(500, "InternalServerError"), switchboard.EUNAVAILABLE, ""},
		{"503", answer(503, "Service Unavailable"), switchboard.EUNAVAILABLE, ""},
		{"400", answer(400, "Bad Request"), switchboard.EINTERNAL, "details in the logs"},
		{"deadline", fmt.Errorf("send: %w", context.DeadlineExceeded), switchboard.EUNAVAILABLE, ""},
		{"refused", &awssigned.SendError{Err: &net.OpError{Op: "dial", Err: errors.New("refused")}}, switchboard.EUNAVAILABLE, ""},
		{"validation", answer(400, "ValidationException"), switchboard.EINTERNAL, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := mapErr("test.op", "tbl", tt.err)
			if got := switchboard.ErrorCode(err); got != tt.want {
				t.Fatalf("code %q, want %q (err %v)", got, tt.want, err)
			}
			if !strings.Contains(switchboard.ErrorMessage(err), tt.wantMsg) {
				t.Errorf("message %q, want it to contain %q", switchboard.ErrorMessage(err), tt.wantMsg)
			}
			if tt.err != nil && !errors.Is(err, tt.err) {
				t.Errorf("mapped error does not wrap its cause")
			}
		})
	}
}
