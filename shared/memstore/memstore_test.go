package memstore_test

import (
	"testing"

	"github.com/switchboard-dev/switchboard/shared/memstore"
	"github.com/switchboard-dev/switchboard/shared/storetest"
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
