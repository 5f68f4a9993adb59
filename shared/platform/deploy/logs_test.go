package deploy

import (
	"strings"
	"testing"
)

// Every function logs into a group of its own with the retention the
// LogRetentionDays parameter gives (30 days unless set).
func TestSAMFunctionsLogWithARetention(t *testing.T) {
	tpl := string(SAMTemplate())
	res := samResources(t, tpl)
	mustContain(t, "Parameters", tpl, "  "+LogRetentionParameter+":\n    Type: Number\n    Default: 30\n    AllowedValues: [1, 3, 5, 7, 14, 30, 60,")
	for _, f := range Functions {
		id := LogGroupLogicalID(f.Name)
		mustContain(t, id, res[id], "Type: AWS::Logs::LogGroup\n    DeletionPolicy: Retain\n", "RetentionInDays: !Ref "+LogRetentionParameter+"\n")
		if strings.Contains(res[id], "LogGroupName") {
			t.Errorf("%s has a fixed name; it would collide with the group Lambda created before", id)
		}
		fn := LogicalID(f.Name, "Function")
		mustContain(t, fn, res[fn], "LoggingConfig:\n        LogGroup: !Ref "+id+"\n")
	}
}

func TestCheckLogRetentionDays(t *testing.T) {
	for _, ok := range []int{1, 30, 365, 3653} {
		if err := CheckLogRetentionDays(ok); err != nil {
			t.Errorf("CheckLogRetentionDays(%d) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []int{0, -1, 2, 31, 10000} {
		err := CheckLogRetentionDays(bad)
		if err == nil || !strings.Contains(err.Error(), "use one of 1, 3, 5") || !strings.Contains(err.Error(), "(default 30)") {
			t.Errorf("CheckLogRetentionDays(%d) = %v, want the allowed values", bad, err)
		}
	}
}
