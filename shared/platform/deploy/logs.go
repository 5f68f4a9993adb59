package deploy

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// DefaultLogRetentionDays is how long the functions' log groups keep their
// events unless instance.logRetentionDays says otherwise. Without a
// retention CloudWatch keeps them forever, billed every month.
const DefaultLogRetentionDays = 30

// LogRetentionDays is every retention CloudWatch Logs accepts, in days.
var LogRetentionDays = []int{1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653}

// LogRetentionParameter is the SAM template parameter that carries the
// functions' log retention (CDK: instance.logRetentionDays of the packaged
// config).
const LogRetentionParameter = "LogRetentionDays"

// CheckLogRetentionDays explains a retention CloudWatch Logs would refuse.
func CheckLogRetentionDays(days int) error {
	if slices.Contains(LogRetentionDays, days) {
		return nil
	}
	allowed := make([]string, len(LogRetentionDays))
	for i, d := range LogRetentionDays {
		allowed[i] = strconv.Itoa(d)
	}
	return fmt.Errorf("%d days is not a retention CloudWatch Logs offers; use one of %s (default %d)",
		days, strings.Join(allowed, ", "), DefaultLogRetentionDays)
}

// LogGroupLogicalID names the log group of a function: ToolsFunctionLogs.
// The group has no fixed name (CloudFormation makes one), so a stack that
// ran before it existed does not collide with the /aws/lambda/<name> group
// Lambda created then.
func LogGroupLogicalID(fn string) string { return LogicalID(fn, "FunctionLogs") }
