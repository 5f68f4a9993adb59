// Command telemetry-export is the telemetry-export Lambda (see shared/platform/deploy): env → builder → lambdamain.Start.
// Its builder (shared/app/telemetryexportfn) is the only one that links the OpenTelemetry SDK.
package main

import (
	"github.com/switchboard-dev/switchboard/shared/app/telemetryexportfn"
	"github.com/switchboard-dev/switchboard/shared/platform/lambdamain"
)

func main() { lambdamain.Start("telemetry-export", telemetryexportfn.Build) }
