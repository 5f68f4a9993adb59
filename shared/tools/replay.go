package tools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// DefaultReplayActions are the calls whose repetition repeats an effect on
// the world (a second message, a second task, a second share): in a wake
// that is run again after a crash they answer what the first attempt
// recorded instead of running again. Reads are never among them: a
// recovered run must see the world as it is now.
var DefaultReplayActions = []string{
	"RocketChat.send_message", "RocketChat.reply", "RocketChat.send_file", "RocketChat.react",
	"Taskboard.task_create", "Taskboard.task_comment",
	"Nextcloud.upload", "Nextcloud.move", "Nextcloud.delete", "Nextcloud.share", "Nextcloud.unshare",
	"Nextcloud.restore_version",
	"Documents.deliver",
	sb.AskAgentTool + ".ask",
	"notify_user.send", // the router: Telegram and Rocket.Chat notices
}

// ReplayKeep is how long a recorded outcome is kept: as long as a done wake
// claim, after which the message can no longer wake the agent again.
const ReplayKeep = 7 * 24 * time.Hour

// replayKey is the KV key of call's recorded outcome, or "" when call is
// not replayed: no replay key (not a wake's run), or an action that is
// not listed. The arguments are hashed in canonical form (object keys
// sorted) so that a model's different spacing or key order still matches.
func (x *Executor) replayKey(call sb.ToolCall) string {
	if x.replays == nil || call.Replay == "" || !x.replayable[call.Tool+"."+call.Action] {
		return ""
	}
	args := []byte(call.Args)
	if v, ok := parseArgs(call.Args); ok {
		if b, err := json.Marshal(v); err == nil {
			args = b
		}
	}
	h := sha256.New()
	// Length-prefixed, so that no tool/action/args split collides with another.
	fmt.Fprintf(h, "%d:%s%d:%s", len(call.Tool), call.Tool, len(call.Action), call.Action)
	h.Write(args)
	return fmt.Sprintf("replay#%s#%d#%s", call.Replay, call.CallIndex, hex.EncodeToString(h.Sum(nil)))
}

// recorded returns the outcome kept under key by an earlier attempt of the
// same wake. A store that cannot answer counts as nothing recorded: the call
// runs (a possible repeat is better than a wake that cannot act).
func (x *Executor) recorded(ctx context.Context, key string) (sb.Envelope, bool) {
	v, found, err := x.replays.Get(ctx, key)
	if err != nil {
		x.log.WarnContext(ctx, "tool replay lookup failed; the call runs", "key", key, "err", err)
		return sb.Envelope{}, false
	}
	if !found {
		return sb.Envelope{}, false
	}
	var env sb.Envelope
	if err := json.Unmarshal([]byte(v), &env); err != nil {
		x.log.WarnContext(ctx, "tool replay record unreadable; the call runs", "key", key, "err", err)
		return sb.Envelope{}, false
	}
	if env.Data == nil {
		env.Data = map[string]any{}
	}
	env.Data["replayed"] = true
	return env, true
}

// record keeps env under key for the wake's later attempts. Only what
// happened is kept: ok, or staged for approval (a retry must not ask the
// human twice). A conditional create: the first record wins.
func (x *Executor) record(ctx context.Context, key string, env sb.Envelope) {
	if env.Status != sb.OutcomeOK && env.Status != sb.OutcomePending {
		return
	}
	b, err := json.Marshal(env)
	if err == nil {
		err = x.replays.PutIf(context.WithoutCancel(ctx), key, "", string(b), x.now().Add(ReplayKeep))
	}
	if err != nil && sb.ErrorCode(err) != sb.ECONFLICT {
		x.log.WarnContext(ctx, "tool outcome not recorded; a recovered wake may repeat this call", "key", key, "err", err)
	}
}
