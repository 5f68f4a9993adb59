package memstore_test

import (
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"github.com/switchboard-dev/switchboard/shared/adapters/storetest"
	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

func TestAuditStore(t *testing.T) {
	storetest.RunAuditStore(t, func(*testing.T) switchboard.AuditStore { return memstore.New() })
}

func TestReceiptStore(t *testing.T) {
	storetest.RunReceiptStore(t, func(*testing.T) switchboard.ReceiptStore { return memstore.New() })
}

func TestJobStore(t *testing.T) {
	storetest.RunJobStore(t, func(*testing.T) switchboard.JobStore { return memstore.New() })
}

func TestMarkers(t *testing.T) {
	storetest.RunMarkers(t, func(*testing.T) switchboard.Markers { return &memstore.Store{} }) // zero value works
}

func TestCounters(t *testing.T) {
	storetest.RunCounters(t, func(_ *testing.T, now func() time.Time) switchboard.Counters {
		return &memstore.Store{Now: now}
	})
}

func TestKV(t *testing.T) {
	storetest.RunKV(t, func(_ *testing.T, now func() time.Time) switchboard.KV {
		return (&memstore.Store{Now: now}).KV()
	})
}

func TestLeases(t *testing.T) {
	storetest.RunLeases(t, func(_ *testing.T, now func() time.Time) switchboard.Leases {
		return &memstore.Store{Now: now}
	})
}

func TestWakeClaims(t *testing.T) {
	storetest.RunWakeClaims(t, func(_ *testing.T, now func() time.Time) switchboard.KV {
		return (&memstore.Store{Now: now}).KV()
	})
}

func TestAgentMessages(t *testing.T) {
	storetest.RunAgentMessages(t, func(*testing.T) switchboard.AgentMessageStore { return &memstore.AgentMessages{} })
}

func TestRecordAll(t *testing.T) {
	storetest.RunRecordAll(t, func(*testing.T) (switchboard.AgentMessageStore, storetest.ReceiptsAndLeases) {
		receipts := memstore.New()
		return &memstore.AgentMessages{Receipts: receipts}, receipts
	})
}
