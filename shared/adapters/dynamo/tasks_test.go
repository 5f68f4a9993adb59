package dynamo_test

import (
	"testing"

	"github.com/switchboard-dev/switchboard/shared/adapters/storetest"
	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

func TestTaskStore(t *testing.T) {
	storetest.RunTaskStore(t, func(t *testing.T) switchboard.TaskStore { return newStore(t).Tasks() })
}
