package httpapi

import (
	"bytes"
	"html/template"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/platform/safehtml"
	"github.com/switchboard-dev/switchboard/shared/usecases/approvals"
)

// templatePage is the page as html/template rendered it before renderPage
// replaced it; the two must agree byte for byte, escaping included.
var templatePage = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex,nofollow">
<title>{{.Title}} – Switchboard</title>
<style>{{.Style}}</style>
</head><body>
<h1>{{.Title}}</h1>
<p>{{.Message}}</p>
{{- if .Show}}
<dl>
<dt>Agent</dt><dd>{{.A.Agent}}</dd>
<dt>Action</dt><dd>{{.A.What}}</dd>
<dt>Reason</dt><dd>{{if .A.Reason}}{{.A.Reason}}{{else}}(none given){{end}}</dd>
<dt>Arguments</dt><dd><pre>{{.A.Args}}</pre></dd>
<dt>Requested</dt><dd>{{.A.Created}} (run {{.A.RunID}})</dd>
<dt>Expires</dt><dd>{{.A.Expires}}</dd>
<dt>Status</dt><dd>{{.A.Status}}</dd>
{{- if .A.Decided}}
<dt>Decided</dt><dd>{{.A.Decided}}</dd>
{{- end}}
{{- if .A.Result}}
<dt>Result</dt><dd><pre>{{.A.Result}}</pre></dd>
{{- end}}
</dl>
{{- end}}
{{- range .Forms}}
<form method="post" action="{{$.A.ID}}">
<input type="hidden" name="token" value="{{.Token}}">
<input type="hidden" name="decision" value="{{.Decision}}">
<button type="submit"{{if .Primary}} class="primary"{{end}}>{{.Label}}</button>
</form>
{{- end}}
{{- if .Note}}
<p class="note">{{.Note}}</p>
{{- end}}
</body></html>
`))

// TestRenderPageEscapesLikeHTMLTemplate keeps the hand-built page equal to
// the html/template original for plain, hostile and full views.
func TestRenderPageEscapesLikeHTMLTemplate(t *testing.T) {
	views := []pageView{
		{Title: "T<x>+1", Message: "m & 'q' \"d\" \x00"},
		{Title: "Approval requested", Message: "msg", Show: true, Note: "n<>", A: approvals.Shown{ID: "ap_1", Agent: "hermes", What: "Workspace.delete", Args: "{\n  \"path\": \"<a>\"\n}", Created: "c", Expires: "e", Status: "pending", RunID: "r1"},
			Forms: []formView{{Decision: "approve", Label: "Approve: run x once", Token: "tok&1", Primary: true}, {Decision: "deny", Label: "Deny", Token: "t2"}}},
		{Title: "Done", Show: true, A: approvals.Shown{ID: "ap_2", Reason: "why", Decided: "d", Result: "{\"status\":\"ok\"}"}},
	}
	for i, v := range views {
		var a bytes.Buffer
		var b safehtml.Writer
		if err := templatePage.Execute(&a, struct {
			pageView
			Style template.CSS
		}{v, template.CSS(pageStyle)}); err != nil {
			t.Fatal(err)
		}
		renderPage(&b, v)
		if a.String() != b.String() {
			t.Errorf("view %d differs:\nold:\n%s\nnew:\n%s", i, a.String(), b.String())
		}
	}
}
