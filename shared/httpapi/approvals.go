package httpapi

import (
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"

	"github.com/switchboard-dev/switchboard/shared/platform/safehtml"
	"github.com/switchboard-dev/switchboard/shared/usecases/approvals"
)

// maxForm caps a POST body: a token and a decision fit in well under 1 KB.
const maxForm = 8 << 10

// Approvals serves the approval links over the approvals use case:
//
//	GET  /approvals/{id}?decision=approve|deny&token=…  confirmation page; changes nothing
//	POST /approvals/{id}  form: token, decision          decides
//	                      (deny: optional reason; approve: optional
//	                      allow_hours, one of the page's choices)
//
// A GET (or HEAD) never decides, because link-preview bots and mail
// scanners open links too. POST answers 200 when it decided, 409 when the
// approval was already decided, 403 for a bad token, 410 when expired, 404
// for an unknown id and 400 for a malformed form. Every page is escaped
// HTML with no-store, no-referrer, DENY framing and a CSP that allows
// nothing but its own style and posting to itself.
func Approvals(svc *approvals.Service) http.Handler {
	h := &approvalPages{svc: svc}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /approvals/{id}", h.show)
	mux.HandleFunc("POST /approvals/{id}", h.post)
	return mux
}

type approvalPages struct{ svc *approvals.Service }

func (h *approvalPages) show(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p, err := h.svc.Preview(r.Context(), r.PathValue("id"), q.Get("decision"), q.Get("token"))
	if err != nil {
		h.failed(w, r, err)
		return
	}
	v := h.view(p.Outcome)
	what := p.Approval.Tool + "." + p.Approval.Action
	for _, c := range p.Choices {
		f := formView{Decision: string(c.Decision), Token: c.Token, Primary: c.Decision == approvals.Approve}
		if c.Decision == approvals.Approve {
			f.Label = "Approve: run " + what + " once"
			v.Forms = append(v.Forms, f)
			scope := approvals.DescribeScope(approvals.ScopeOf(p.Approval.Tool, p.Approval.Args))
			for _, hrs := range h.svc.AllowChoices(p.Approval) {
				v.Forms = append(v.Forms, formView{Decision: f.Decision, Token: c.Token,
					AllowHours: strconv.FormatFloat(hrs, 'f', -1, 64),
					Label:      "Approve, and allow " + what + " in " + scope + " for " + approvals.DescribeHours(hrs)})
			}
			continue
		}
		f.Label, f.Reason = "Deny", true
		v.Forms = append(v.Forms, f)
	}
	if len(p.Choices) == 1 && p.Choices[0].Decision == approvals.Deny {
		v.Note = "This is the Deny link. To approve instead, open the Approve link of the same message."
	}
	writePage(w, ApprovalStatus(string(p.Kind)), v)
}

func (h *approvalPages) post(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		writePage(w, http.StatusBadRequest, pageView{Title: "Not decided",
			Message: "The form could not be read; use the buttons on the approval page. Nothing was changed."})
		return
	}
	// PostForm only: a token in the query string must not decide.
	x := approvals.Extra{DenyReason: r.PostForm.Get("reason")}
	if s := r.PostForm.Get("allow_hours"); s != "" {
		hrs, err := strconv.ParseFloat(s, 64)
		if err != nil || hrs <= 0 {
			writePage(w, http.StatusBadRequest, pageView{Title: "Not decided",
				Message: "The allowance could not be read; use the buttons on the approval page. Nothing was changed."})
			return
		}
		x.AllowHours = hrs
	}
	o, err := h.svc.DecideByLinkWith(r.Context(), r.PathValue("id"), r.PostForm.Get("decision"), r.PostForm.Get("token"), x)
	if err != nil {
		h.failed(w, r, err)
		return
	}
	writePage(w, ApprovalStatus(string(o.Kind)), h.view(o))
}

// failed answers a store failure: the status from the one error table,
// the detail only in the log.
func (h *approvalPages) failed(w http.ResponseWriter, r *http.Request, err error) {
	h.svc.LogFailure(r.Context(), r.Method, r.PathValue("id"), err)
	writePage(w, Status(err), pageView{Title: "Try again",
		Message: "The approval service could not answer right now. Nothing was changed; try the link again in a moment."})
}

// pageView is what the page shows; every field is plain text.
type pageView struct {
	Title   string
	Message string
	Note    string
	Show    bool
	A       approvals.Shown
	Forms   []formView
}

type formView struct {
	Decision, Label, Token string
	Primary                bool
	// AllowHours is set on an "approve, and allow for N hours" form;
	// Reason asks for an optional reason (the deny form).
	AllowHours string
	Reason     bool
}

// pageTitles are the headings of the page per outcome, built on first use
// (every function links this package; only one serves pages).
var pageTitles = sync.OnceValue(func() map[approvals.OutcomeKind]string {
	return map[approvals.OutcomeKind]string{
		approvals.KindReady: "Approval requested", approvals.KindApproved: "Approved; running",
		approvals.KindFailed: "Approved; the action did not run", approvals.KindDenied: "Denied",
		approvals.KindAlreadyDecided: "Already decided", approvals.KindInvalidToken: "Invalid link",
		approvals.KindNotApprover: "Not allowed", approvals.KindExpired: "Expired",
		approvals.KindUnknown: "Unknown request", approvals.KindMalformed: "Not decided",
	}
})

// view turns an outcome into page text. Refusals without proof of access
// show no details.
func (h *approvalPages) view(o approvals.Outcome) pageView {
	v := pageView{Title: pageTitles()[o.Kind], Message: o.Message}
	if o.Approval.ID == "" {
		return v
	}
	v.Show = true
	v.A = h.svc.Show(o.Approval)
	return v
}

const pageStyle = `body{font:16px/1.45 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;color:#222}` +
	`dt{font-weight:600;margin-top:.6rem}dd{margin:0}pre{background:#f4f4f4;padding:.6rem;overflow:auto;white-space:pre-wrap;word-break:break-all}` +
	`form{display:inline-block;margin:1rem 1rem 0 0}button{font-size:1rem;padding:.5rem 1.1rem;cursor:pointer}` +
	`.primary{background:#1a7f37;color:#fff;border:0}.note{color:#555}` +
	`label{display:block;margin-bottom:.3rem}textarea{display:block;width:100%;min-width:18rem;margin-bottom:.5rem;font:inherit}`

// pageCSP allows no script, no image, no connection; only the page's own
// style (by hash) and forms that post to this origin; no framing. Built on
// first use: every function links this package, only one serves pages.
var pageCSP = sync.OnceValue(func() string {
	sum := sha256.Sum256([]byte(pageStyle))
	return "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) +
		"'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
})

// renderPage writes the page. Every field is plain text, escaped by the
// writer; the page is built by hand rather than with html/template because
// the template engine's reflection keeps every exported method of every
// type in the binary, which doubled the size of the approvals function.
func renderPage(w *safehtml.Writer, v pageView) {
	w.M("<!doctype html>\n")
	w.M(`<html lang="en"><head><meta charset="utf-8">` + "\n")
	w.M(`<meta name="viewport" content="width=device-width,initial-scale=1">` + "\n")
	w.M(`<meta name="robots" content="noindex,nofollow">` + "\n")
	w.M("<title>")
	w.Text(v.Title)
	w.M(" – Switchboard</title>\n")
	w.M("<style>" + pageStyle + "</style>\n")
	w.M("</head><body>\n")
	w.El("h1", v.Title)
	w.M("\n")
	w.El("p", v.Message)
	if v.Show {
		reason := v.A.Reason
		if reason == "" {
			reason = "(none given)"
		}
		w.M("\n<dl>\n")
		w.M("<dt>Agent</dt>")
		w.El("dd", v.A.Agent)
		w.M("\n<dt>Action</dt>")
		w.El("dd", v.A.What)
		w.M("\n<dt>Reason</dt>")
		w.El("dd", reason)
		w.M("\n<dt>Arguments</dt><dd><pre>")
		w.Text(v.A.Args)
		w.M("</pre></dd>\n<dt>Requested</dt><dd>")
		w.Texts(v.A.Created, " (run ", v.A.RunID, ")")
		w.M("</dd>\n<dt>Expires</dt>")
		w.El("dd", v.A.Expires)
		w.M("\n<dt>Status</dt>")
		w.El("dd", v.A.Status)
		if v.A.Decided != "" {
			w.M("\n<dt>Decided</dt>")
			w.El("dd", v.A.Decided)
		}
		if v.A.Result != "" {
			w.M("\n<dt>Result</dt><dd><pre>")
			w.Text(v.A.Result)
			w.M("</pre></dd>")
		}
		w.M("\n</dl>")
	}
	for _, f := range v.Forms {
		w.M("\n<form method=\"post\"")
		w.Href("action", safehtml.Link(url.PathEscape(v.A.ID)))
		w.M(">\n<input type=\"hidden\" name=\"token\"")
		w.Attr("value", f.Token)
		w.M(">\n<input type=\"hidden\" name=\"decision\"")
		w.Attr("value", f.Decision)
		if f.AllowHours != "" {
			w.M(">\n<input type=\"hidden\" name=\"allow_hours\"")
			w.Attr("value", f.AllowHours)
		}
		if f.Reason {
			w.M(">\n<label for=\"reason\">Reason (optional; the agent is told)</label>" +
				"<textarea id=\"reason\" name=\"reason\" rows=\"2\" maxlength=\"500\"></textarea")
		}
		w.M(">\n<button type=\"submit\"")
		if f.Primary {
			w.M(` class="primary"`)
		}
		w.M(">")
		w.Text(f.Label)
		w.M("</button>\n</form>")
	}
	if v.Note != "" {
		w.M("\n<p class=\"note\">")
		w.Text(v.Note)
		w.M("</p>")
	}
	w.M("\n</body></html>\n")
}

// writePage renders v with the security headers every page carries.
func writePage(w http.ResponseWriter, status int, v pageView) {
	var b safehtml.Writer
	renderPage(&b, v)
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Cache-Control", "no-store")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Content-Security-Policy", pageCSP())
	if status == 0 {
		status = http.StatusInternalServerError
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, b.String())
}
