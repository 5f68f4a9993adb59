package switchboard

// OutcomeReplayed is the audit outcome of a call that a recovered wake made
// again with the same arguments at the same place: it did not run; the
// executor answered what the wake's earlier attempt recorded (see
// ToolCall.Replay).
const OutcomeReplayed = "replayed"
