package actions

import (
	"time"

	"github.com/switchboard-dev/switchboard/shared/usecases/agentrun"
	"github.com/switchboard-dev/switchboard/shared/usecases/router"
	"github.com/switchboard-dev/switchboard/shared/usecases/taskboard"
)

// setupTaskboard builds the daily budget and the taskboard on the tasks
// table. Its messages go through the core's scrubbing log over the
// AgentMessages store: the service records them, never the tool's
// arguments. Its bounds count in the state table and take the taskboard's
// defaults (5 tasks per run, 30 per agent and hour, 3 hand-overs).
func (a *Actions) setupTaskboard() {
	c := a.Core
	a.Budget = &agentrun.Budget{Store: c.Store, Limits: c, Notifier: router.Notices{Router: a.Decide.Router}, Log: c.Log}
	// The core builds the control without a router; it gets its notifier
	// here, at build time, before anything runs.
	c.Control().Notifier = router.Notices{Router: a.Decide.Router}
	a.Taskboard = &taskboard.Service{
		Tasks:         c.Store.Tasks(),
		Messages:      a.MessageLog(),
		Waker:         c.Dispatcher,
		Notify:        a.Decide.Router,
		Agents:        taskboard.ConfigParties{Config: c.Config},
		Counters:      c.Store,
		Budget:        a.Budget,
		Chain:         c.Control(),
		WatchdogAfter: time.Duration(c.Config.Instance.Taskboard.WatchdogHours) * time.Hour,
		Log:           c.Log,
	}
}
