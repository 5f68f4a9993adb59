package nctool_test

import (
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/adapters/collabora/cofake"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/nctool"
)

func TestConvertWorkspaceCSVToXLSX(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write("out/sales.csv", "region,total\nnorth,12\n")
	env := e.ok(e.invoke("convert", `{"localPath":"out/sales.csv","format":"xlsx"}`))
	if env.Data["localPath"] != "out/sales.xlsx" || !strings.Contains(env.Data["contentType"].(string), "spreadsheetml") {
		t.Errorf("convert = %+v", env.Data)
	}
	got, ok := e.read("personal:out/sales.xlsx")
	if !ok || !strings.HasPrefix(got, "PK") {
		t.Fatalf("converted file is not a zip container: %q…", got[:min(len(got), 10)])
	}
	reqs := e.co.Requests()
	if len(reqs) != 1 || reqs[0].Prefix != "cool" || reqs[0].ContentLength <= 0 || reqs[0].FileName != "sales.csv" {
		t.Errorf("Collabora saw %+v; want one sized POST to /cool/", reqs)
	}
	e.ok(e.invoke("convert", `{"localPath":"out/sales.csv","format":"pdf","target":"shared:exports/"}`))
	if got, ok := e.read("shared:exports/sales.pdf"); !ok || !strings.HasPrefix(got, "%PDF") {
		t.Errorf("shared:exports/ target: %v", ok)
	}
}

func TestConvertNextcloudHTMLToPDF(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.seed(root+"/reports/q3.html", "<h1>Q3</h1>")
	env := e.ok(e.invoke("convert", `{"path":"reports/q3.html","format":"pdf"}`))
	if env.Data["path"] != "/reports/q3.pdf" || env.Data["created"] != true {
		t.Errorf("convert = %+v", env.Data)
	}
	if got, ok := e.file(root + "/reports/q3.pdf"); !ok || !strings.HasPrefix(got, "%PDF") {
		t.Fatalf("no PDF in Nextcloud")
	}
	env = e.ok(e.invoke("convert", `{"path":"reports/q3.html","format":"docx","target":"out/word/"}`))
	if env.Data["path"] != "/out/word/q3.docx" {
		t.Errorf("target folder: %+v", env.Data)
	}
	// A locked report target falls back to a timestamped name, as upload does.
	e.nc.Lock(root + "/reports/q3.pdf")
	env = e.ok(e.invoke("convert", `{"path":"reports/q3.html","format":"pdf"}`))
	if env.Data["path"] != "/reports/q3-20260501-213000.pdf" || !strings.Contains(env.Data["message"].(string), "locked") {
		t.Errorf("locked target: %+v", env.Data)
	}
	e.failed(e.invoke("convert", `{"path":"reports/q3.html","format":"pdf","target":"../x.pdf"}`), sb.EINVALID, "climbs out")
	// A file where the target's folder should be is named, with the argument to change.
	e.failed(e.invoke("convert", `{"path":"reports/q3.html","format":"pdf","target":"reports/q3.html/q3.pdf"}`), sb.ECONFLICT,
		"/reports/q3.html is a file, but /reports/q3.html/q3.pdf needs a folder of that name", "choose another target")
}

func TestConvertRefusedByCollaboraSuggestsMarkdownOrCSV(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.co.SetOptions(cofake.Options{Refuse403: true})
	e.write("sales.csv", "a,b\n1,2\n")
	env := e.failed(e.invoke("convert", `{"localPath":"sales.csv","format":"xlsx"}`), sb.EFORBIDDEN, "refuses conversions from this host", "Markdown or CSV")
	if env.HTTPStatus != 403 || !strings.HasSuffix(env.Endpoint, "/cool/convert-to/xlsx") {
		t.Errorf("http_status %d endpoint %q", env.HTTPStatus, env.Endpoint)
	}
	if s, _ := env.Data["suggestion"].(string); !strings.Contains(s, "deliver the CSV itself") {
		t.Errorf("suggestion = %q", s)
	}
	e.write("r.html", "<p>x</p>")
	env = e.failed(e.invoke("convert", `{"localPath":"r.html","format":"pdf"}`), sb.EFORBIDDEN)
	if s, _ := env.Data["suggestion"].(string); !strings.Contains(s, "deliver Markdown instead") {
		t.Errorf("suggestion = %q", s)
	}
	if _, ok := e.read("personal:sales.xlsx"); ok {
		t.Errorf("a refused conversion left a file")
	}
}

func TestConvertFailures(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write("notes.md", "# notes")
	env := e.failed(e.invoke("convert", `{"localPath":"notes.md","format":"pdf"}`), sb.EINVALID, "Markdown")
	if env.Data["suggestion"] != nil {
		t.Errorf("an input error got a fallback suggestion: %v", env.Data["suggestion"])
	}
	e.failed(e.invoke("convert", `{"localPath":"missing.csv","format":"xlsx"}`), sb.ENOTFOUND, "no file")
	e.failed(e.invoke("convert", `{"path":"missing.csv","format":"xlsx"}`), sb.ENOTFOUND, "cannot read /missing.csv")
	e.failed(e.invoke("convert", `{"format":"pdf"}`), sb.EINVALID, "exactly one source")
	e.failed(e.invoke("convert", `{"localPath":"notes.md","path":"notes.md","format":"pdf"}`), sb.EINVALID, "exactly one source")
	e.co.SetOptions(cofake.Options{Down: true})
	e.write("a.csv", "a\n")
	env = e.failed(e.invoke("convert", `{"localPath":"a.csv","format":"xlsx"}`), sb.EUNAVAILABLE, "try again later")
	if env.HTTPStatus != 503 || env.Data["suggestion"] == nil {
		t.Errorf("503 envelope = %+v", env)
	}
	e.configure(func(a *nctool.Agent) { a.Collabora = nil })
	e.failed(e.invoke("convert", `{"localPath":"a.csv","format":"xlsx"}`), sb.EFORBIDDEN, "no collaboraUrl", "Markdown or CSV")
}
