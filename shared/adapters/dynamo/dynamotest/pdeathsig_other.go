//go:build !linux

package dynamotest

import "os/exec"

// setParentDeathSignal has no portable equivalent outside Linux; there
// dynalite is stopped only by Main.
func setParentDeathSignal(*exec.Cmd) {}
