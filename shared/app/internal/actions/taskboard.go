package actions

import (
	"context"
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
	a.Budget = &agentrun.Budget{
		Store: a.Store,
		Limit: func(id string) (float64, string) {
			c, ok := a.Config.Agent(id)
			if !ok {
				return 0, id
			}
			return c.DailyBudgetUSD, a.AgentName(id)
		},
		Notify: func(ctx context.Context, text string) error {
			_, err := a.Router.Deliver(ctx, router.Notice{Kind: router.KindBudget, Text: text})
			return err
		},
		Log: a.Log,
	}
	a.Taskboard = &taskboard.Service{
		Tasks:    a.Store.Tasks(),
		Messages: a.MessageLog(),
		Waker:    a.Dispatcher,
		Notify:   a.Router,
		Agents: func(id string) (taskboard.Party, bool) {
			c, ok := a.Config.Agent(id)
			if !ok {
				return taskboard.Party{}, false
			}
			return taskboard.Party{Name: a.AgentName(id), Taskboard: c.Tools.Taskboard != nil}, true
		},
		Counters:      a.Store,
		Budget:        a.Budget,
		WatchdogAfter: time.Duration(a.Config.Instance.Taskboard.WatchdogHours) * time.Hour,
		Log:           a.Log,
	}
}

// watchTasks is the task-watchdog job.
func (a *Actions) watchTasks(ctx context.Context) (string, error) { return a.Taskboard.Watchdog(ctx) }
