package pipeline_test

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/switchboard-dev/switchboard/shared/usecases/pipeline"
)

func TestDeliverCSVAsXLSXSharedWithAUser(t *testing.T) {
	t.Parallel() // each test has its own runtime
	w := newWorld(t)
	w.put("personal:q3.csv", "region,revenue\nnorth,10\n")
	id := started(t, w.deliver(`{"localPath":"personal:q3.csv","format":"xlsx","share":{"with":"richard"},
		"room":"finanz-team","message":"Q3 numbers"}`))

	d := w.wait(id)
	if d.Status != types.ExecutionStatusSucceeded {
		t.Fatalf("execution %s: %s %s", d.Status, aws.ToString(d.Error), aws.ToString(d.Cause))
	}
	if got := w.files("/reports"); len(got) != 1 || got[0] != "/reports/q3.xlsx" {
		t.Errorf("reports folder holds %v, want [/reports/q3.xlsx]", got)
	}
	msgs := w.rc.Messages(w.room)
	if len(msgs) != 1 || !strings.Contains(msgs[0].Text, "Q3 numbers") || !strings.Contains(msgs[0].Text, "https://cloud.example.org/f/") {
		t.Errorf("room got %+v, want one message with the text and the file's link", msgs)
	}
	jobs := w.jobs.all()
	if len(jobs) != 1 || jobs[0].Parent == nil || jobs[0].Parent.RunID != run.RunID || jobs[0].Source != pipeline.JobSource ||
		!strings.Contains(jobs[0].Text, "finished") || !strings.Contains(jobs[0].Text, "/reports/q3.xlsx") {
		t.Errorf("follow-up jobs %+v, want one follow-up of run-1 saying it finished", jobs)
	}
	if told := w.told.all(); len(told) != 0 {
		t.Errorf("the human was told %q on success", told)
	}
	for _, k := range []string{"Nextcloud.convert", "Nextcloud.upload", "Nextcloud.share", "RocketChat.send_message"} {
		if n := w.invoke.count(k); n != 1 {
			t.Errorf("%s called %d times, want 1", k, n)
		}
	}
}
