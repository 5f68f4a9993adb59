// Package wake turns chat traffic into agent runs: the wake rules, the
// wake message, the Rocket.Chat webhook receiver and poll job, and the
// worker that runs one woken agent at a time and sends
// its final answer back to where the conversation happened.
package wake

import sb "github.com/switchboard-dev/switchboard/shared/switchboard"

// ReplyTo is where the run's final answer goes (the domain's type: approvals
// keep it for the follow-up run).
type ReplyTo = sb.ReplyTo
