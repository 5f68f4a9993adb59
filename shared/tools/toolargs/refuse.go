package toolargs

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// The answers every tool gives alike before or instead of running an action.

// UnknownAction is the EINVALID error for an action the tool does not have;
// it lists the ones it has.
func UnknownAction(op, tool, action string, has []string) error {
	return sb.E(op, sb.EINVALID, fmt.Sprintf("unknown action %s; %s has %s", Quote(action), tool, strings.Join(has, ", ")))
}

// NotConfigured is the EFORBIDDEN error for an agent whose configuration
// has no block for the tool (block is its name there: "Nextcloud").
func NotConfigured(op, agentID, block string) error {
	return sb.E(op, sb.EFORBIDDEN, fmt.Sprintf(
		"agent %s has no %s tool in its configuration; ask the operator to add a %s block to its tools", Quote(agentID), block, block))
}

// Panicked logs a panic r of the tool (named in the log line: "nextcloud")
// with the call that caused it and answers EINTERNAL under op: what failed,
// without the panic's text, which may hold anything and stays in the log.
func Panicked(ctx context.Context, log *slog.Logger, tool string, call sb.ToolCall, r any, op, what string) sb.Envelope {
	log.ErrorContext(ctx, tool+" tool panicked", "panic", fmt.Sprint(r),
		"agent", call.AgentID, "action", call.Action, "runId", call.Run.RunID)
	return sb.FailErr(sb.E(op, sb.EINTERNAL, what+" failed with an internal error; the operator can find details in the logs"))
}
