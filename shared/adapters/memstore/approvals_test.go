package memstore_test

import (
	"testing"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"github.com/switchboard-dev/switchboard/shared/usecases/approvals"
	"github.com/switchboard-dev/switchboard/shared/usecases/approvals/approvalstest"
)

func TestApprovalStore(t *testing.T) {
	approvalstest.RunStore(t, func(*testing.T) approvals.Store { return memstore.NewApprovals() })
}

func TestApprovalsZeroValueIsReady(t *testing.T) {
	var s memstore.Approvals
	if _, err := s.ListOpen(t.Context()); err != nil {
		t.Fatal(err)
	}
}
