package actions

import (
	"context"
	"time"

	"github.com/switchboard-dev/switchboard/shared/usecases/taskboard"
)

// setupTaskboard builds the taskboard on the tasks table. Its messages go
// through the core's scrubbing log over the AgentMessages store: the
// service records them, never the tool's arguments.
func (a *Actions) setupTaskboard() {
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
		WatchdogAfter: time.Duration(a.Config.Instance.Taskboard.WatchdogHours) * time.Hour,
		Log:           a.Log,
	}
}

// watchTasks is the task-watchdog job.
func (a *Actions) watchTasks(ctx context.Context) (string, error) { return a.Taskboard.Watchdog(ctx) }
