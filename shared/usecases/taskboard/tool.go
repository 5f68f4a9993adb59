package taskboard

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	"github.com/switchboard-dev/switchboard/shared/platform/untrusted"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/toolargs"
)

// ToolName is the tool's name in configs, GET /tools and audits.
const ToolName = "Taskboard"

// Action names. A model sees "Taskboard__task_create" and so on, so that
// the names it reads say what they do; the short names (create, comment,
// complete, block, list) are accepted as aliases everywhere an action is
// named (POST /tools/invoke, staging rules are keyed by the long name).
const (
	ActionCreate   = "task_create"
	ActionComment  = "task_comment"
	ActionComplete = "task_complete"
	ActionBlock    = "task_block"
	ActionList     = "task_list"
)

// Tool is the Taskboard tool: the model's face of the Service.
type Tool struct{ s *Service }

// NewTool wraps s as the Taskboard tool.
func NewTool(s *Service) *Tool { return &Tool{s: s} }

var _ sb.Tool = (*Tool)(nil)

// The arguments of each action, declared once: the schema offered to
// models comes from these tags and Invoke enforces the same limits.
type (
	createArgs struct {
		Assignee    *string `json:"assignee" required:"true" schema:"minLength=1,maxLength=64" doc:"the id of the agent that shall do the task"`
		Title       *string `json:"title" required:"true" schema:"minLength=1,maxLength=200" doc:"what is to be done, in one line"`
		Description *string `json:"description" required:"true" schema:"minLength=1,maxLength=20000" doc:"everything the assignee needs: the goal, where the inputs are, what the result should look like"`
	}
	commentArgs struct {
		TaskID *string `json:"taskId" required:"true" schema:"minLength=1,maxLength=64"`
		Text   *string `json:"text" required:"true" schema:"minLength=1,maxLength=20000" doc:"the comment: a question, an answer, a progress note"`
	}
	completeArgs struct {
		TaskID *string `json:"taskId" required:"true" schema:"minLength=1,maxLength=64"`
		Result *string `json:"result" required:"true" schema:"minLength=1,maxLength=20000" doc:"what came out: the answer, or where the work is (file paths, links)"`
	}
	blockArgs struct {
		TaskID *string `json:"taskId" required:"true" schema:"minLength=1,maxLength=64"`
		Reason *string `json:"reason" required:"true" schema:"minLength=1,maxLength=20000" doc:"why you cannot go on and what would unblock you"`
	}
	listArgs struct {
		Filter *string `json:"filter" schema:"enum=mine|assigned|created" doc:"assigned: tasks you must do; created: tasks you gave; mine (default): both"`
		Status *string `json:"status" schema:"enum=open|blocked|done" doc:"only tasks with this status; default all"`
		Limit  *int    `json:"limit" schema:"minimum=1,maximum=100,default=20" doc:"at most this many tasks per listing, newest first"`
	}
)

// short are the aliases of the actions.
var short = map[string]bool{"create": true, "comment": true, "complete": true, "block": true, "list": true}

var vocab = toolargs.Vocab{Docs: map[string]string{"taskId": "the task's id, as task_create or task_list answered it"}}

// Spec implements switchboard.Tool.
func (t *Tool) Spec() sb.ToolSpec {
	return sb.ToolSpec{
		Name: ToolName,
		Description: "Hand work to another agent and get the result back later: the assignee is woken with the task, " +
			"and you are woken again when it is completed or blocked. For work, not for quick questions.",
		Actions: []sb.ActionSpec{
			{Name: ActionCreate, Aliases: []string{"create"},
				Description: "Give a task to an agent (by id). It is woken with the task; you are woken with its result. Answers the taskId.",
				Parameters:  toolargs.Schema(createArgs{}, vocab)},
			{Name: ActionComment, Aliases: []string{"comment"},
				Description: "Comment on a task you gave or were given (a question, an answer, progress). Comments wake nobody; they go with the task.",
				Parameters:  toolargs.Schema(commentArgs{}, vocab)},
			{Name: ActionComplete, Aliases: []string{"complete"},
				Description: "Complete a task assigned to you with its result; its creator is woken with it.",
				Parameters:  toolargs.Schema(completeArgs{}, vocab)},
			{Name: ActionBlock, Aliases: []string{"block"},
				Description: "Say that you cannot go on with a task assigned to you, and why; its creator is woken and the human is told.",
				Parameters:  toolargs.Schema(blockArgs{}, vocab)},
			{Name: ActionList, Aliases: []string{"list"},
				Description: "List your tasks (assigned to you, given by you, or both), newest first, with their comments.",
				Parameters:  toolargs.Schema(listArgs{}, vocab)},
		},
	}
}

// Invoke implements switchboard.Tool.
func (t *Tool) Invoke(ctx context.Context, call sb.ToolCall) sb.Envelope {
	if short[call.Action] {
		call.Action = "task_" + call.Action // the executor does this already; direct callers may not
	}
	args := toolargs.Args{Op: "taskboard." + call.Action, Action: call.Action}
	switch call.Action {
	case ActionCreate:
		var a createArgs
		if err := args.Decode(call.Args, &a); err != nil {
			return sb.FailErr(err)
		}
		assignee, title, desc, err := texts3(args, "assignee", a.Assignee, "title", a.Title, "description", a.Description)
		if err != nil {
			return sb.FailErr(err)
		}
		c, err := t.s.Create(ctx, call, assignee, title, desc)
		if err != nil {
			return refusal(err)
		}
		data := map[string]any{"taskId": c.Task.ID, "taskStatus": string(c.Task.Status), "assignee": c.Task.Assignee, "assigneeWoken": c.Woken}
		if c.Deferred {
			data["wakeDeferred"] = true // queued by the task-wakes job within ten minutes
		}
		if !c.Woken {
			data["note"] = "the task is kept, but " + assignee + " could not be woken right now; do not create it again"
		}
		return sb.OK(data)
	case ActionComment:
		var a commentArgs
		if err := args.Decode(call.Args, &a); err != nil {
			return sb.FailErr(err)
		}
		id, text, _, err := texts3(args, "taskId", a.TaskID, "text", a.Text, "", nil)
		if err != nil {
			return sb.FailErr(err)
		}
		task, err := t.s.Comment(ctx, call, id, text)
		if err != nil {
			return sb.FailErr(err)
		}
		return sb.OK(map[string]any{"taskId": task.ID, "taskStatus": string(task.Status), "comments": len(task.Comments)})
	case ActionComplete, ActionBlock:
		var id, text string
		var err error
		to := sb.TaskDone
		if call.Action == ActionComplete {
			var a completeArgs
			if err = args.Decode(call.Args, &a); err == nil {
				id, text, _, err = texts3(args, "taskId", a.TaskID, "result", a.Result, "", nil)
			}
		} else {
			to = sb.TaskBlocked
			var a blockArgs
			if err = args.Decode(call.Args, &a); err == nil {
				id, text, _, err = texts3(args, "taskId", a.TaskID, "reason", a.Reason, "", nil)
			}
		}
		if err != nil {
			return sb.FailErr(err)
		}
		f, err := t.s.Finish(ctx, call, id, to, text)
		if err != nil {
			return sb.FailErr(err)
		}
		return sb.OK(map[string]any{"taskId": f.Task.ID, "taskStatus": string(f.Task.Status), "creator": f.Task.Creator,
			"creatorWoken": f.CreatorWoken, "humanTold": f.HumanTold})
	case ActionList:
		var a listArgs
		if err := args.Decode(call.Args, &a); err != nil {
			return sb.FailErr(err)
		}
		var role sb.TaskRole
		switch args.Optional(a.Filter) {
		case "assigned":
			role = sb.TaskAssignedTo
		case "created":
			role = sb.TaskCreatedBy
		}
		limit := 0
		if a.Limit != nil {
			limit = *a.Limit
		}
		tasks, err := t.s.List(ctx, call, role, sb.TaskStatus(args.Optional(a.Status)), limit)
		if err != nil {
			return sb.FailErr(err)
		}
		data := map[string]any{"count": len(tasks)}
		if len(tasks) > 0 {
			data["tasks"] = untrusted.Frame("taskboard", renderTasks(tasks))
		}
		return sb.OK(data)
	}
	return sb.Fail(fmt.Sprintf("Taskboard has no action %q", call.Action))
}

// refusal is the error envelope of a failed task_create; a bound's refusal
// also names its reason ("refused"), the bound ("limit") and, for the
// hourly bound, when the next task can be created ("retryAfterSeconds").
func refusal(err error) sb.Envelope {
	env := sb.FailErr(err)
	var r *Refused
	if errors.As(err, &r) {
		env.Data["refused"] = r.Reason
		if r.Limit > 0 {
			env.Data["limit"] = r.Limit
		}
		if r.Err.RetryAfter > 0 {
			env.Data["retryAfterSeconds"] = int(r.Err.RetryAfter.Round(time.Second) / time.Second)
		}
	}
	return env
}

// texts3 checks up to three required text arguments (an empty name ends
// the list).
func texts3(a toolargs.Args, n1 string, v1 *string, n2 string, v2 *string, n3 string, v3 *string) (string, string, string, error) {
	var out [3]string
	for i, f := range []struct {
		name string
		v    *string
	}{{n1, v1}, {n2, v2}, {n3, v3}} {
		if f.name == "" {
			break
		}
		s, err := a.Text(f.name, f.v)
		if err != nil {
			return "", "", "", err
		}
		out[i] = s
	}
	return out[0], out[1], out[2], nil
}

// Caps of a listing: enough to pick a task up again, not whole documents.
const (
	listTextCap     = 1000
	listCommentCap  = 300
	listLastComment = 5
)

// renderTasks is a listing as text, one block per task.
func renderTasks(ts []sb.Task) string {
	var b strings.Builder
	for i, t := range ts {
		if i > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "task %s [%s] from %s to %s, created %s, updated %s\ntitle: %s\ndescription: %s",
			t.ID, t.Status, t.Creator, t.Assignee, t.CreatedAt.UTC().Format("2006-01-02 15:04Z"),
			t.UpdatedAt.UTC().Format("2006-01-02 15:04Z"), t.Title, scrub.Cap(t.Description, listTextCap))
		if t.Blocker != "" {
			b.WriteString("\nblocked because: " + scrub.Cap(t.Blocker, listTextCap))
		}
		if t.Result != "" {
			b.WriteString("\nresult: " + scrub.Cap(t.Result, listTextCap))
		}
		if n := len(t.Comments); n > 0 {
			fmt.Fprintf(&b, "\ncomments (%d):", n)
			for _, c := range t.Comments[max(0, n-listLastComment):] {
				b.WriteString("\n- " + c.By + ": " + scrub.Cap(c.Text, listCommentCap))
			}
		}
	}
	return b.String()
}
