package memstore_test

import (
	"testing"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"github.com/switchboard-dev/switchboard/shared/adapters/storetest"
	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

func TestTaskStore(t *testing.T) {
	storetest.RunTaskStore(t, func(*testing.T) switchboard.TaskStore { return &memstore.Tasks{} })
}
