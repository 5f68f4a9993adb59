package memstore_test

import (
	"testing"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"github.com/switchboard-dev/switchboard/shared/adapters/storetest"
	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

func TestApprovalStore(t *testing.T) {
	storetest.RunApprovalStore(t, func(*testing.T) switchboard.ApprovalStore { return memstore.NewApprovals() })
}

func TestApprovalsZeroValueIsReady(t *testing.T) {
	var s memstore.Approvals
	if _, err := s.ListOpen(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func TestAllowanceStoreContract(t *testing.T) {
	storetest.RunAllowanceStore(t, func(*testing.T) switchboard.AllowanceStore { return memstore.NewAllowances() })
}
