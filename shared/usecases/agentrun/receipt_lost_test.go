package agentrun_test

import (
	"context"
	"errors"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// When the model fails AND the receipt write fails, the receipt failure is
// dropped: nothing returns or logs it, so a run's receipt can vanish silently.
func TestReceiptFailureNotLostWhenModelFails(t *testing.T) {
	e, _ := newEngine(&recInvoker{}, failingReceipts{memstore.New()})
	modelDown := errors.New("connection reset")
	_, err := e.Run(context.Background(), agent(&stepModel{steps: []step{{err: modelDown}}}), "hi", nil)
	if !errors.Is(err, modelDown) {
		t.Errorf("err = %v, want the model's error", err)
	}
	if sb.ErrorCode(err) != sb.EUNAVAILABLE && !containsCode(err, sb.EUNAVAILABLE) {
		t.Errorf("err = %v, want the receipt store's failure reported too", err)
	}
}

func containsCode(err error, code string) bool {
	var e *sb.Error
	return errors.As(err, &e) && e.Code == code
}
