package console

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"

	"github.com/switchboard-dev/switchboard/shared/platform/safehtml"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/control"
)

// Controller is the operator's switches (control.Control): pause and
// resume an agent, stop a chain. Each is audited with who did it.
type Controller interface {
	Paused(ctx context.Context, agentID string) (bool, error)
	Pause(ctx context.Context, agentID, by string) error
	Resume(ctx context.Context, agentID, by string) (int, error)
	Stop(ctx context.Context, rootRunID, by string) (control.StopReport, error)
}

// controlView is the confirmation page of one action, or its outcome.
type controlView struct {
	Action, Agent, Root string
	CSRF                string
	Done                string // the outcome; "" on the confirmation page
}

// controlAsk reads and checks the action a control request names.
func (c *Console) controlAsk(r *http.Request) (controlView, error) {
	v := controlView{Action: r.FormValue("action"), Agent: r.FormValue("agent"), Root: r.FormValue("root")}
	switch v.Action {
	case "pause", "resume":
		if !slices.ContainsFunc(c.o.Agents, func(a Agent) bool { return a.ID == v.Agent }) {
			return v, sb.E("console.control", sb.EINVALID, "Name a configured agent: /console/control?action="+v.Action+"&agent=<agent id>.")
		}
	case "stop":
		if v.Root == "" {
			return v, sb.E("console.control", sb.EINVALID, "Name the chain: /console/control?action=stop&root=<root run id>.")
		}
	default:
		return v, sb.E("console.control", sb.EINVALID, "The action is pause, resume or stop.")
	}
	if c.o.Control == nil {
		return v, sb.E("console.control", sb.EINVALID, "Pausing and stopping are not set up on this console.")
	}
	return v, nil
}

// controlConfirm shows what the action will do, with the form that does it.
func (c *Console) controlConfirm(w http.ResponseWriter, r *http.Request, s *session) {
	v, err := c.controlAsk(r)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	v.CSRF = s.csrf
	c.render(w, r, http.StatusOK, page{Title: "Confirm " + v.Action, CSRF: s.csrf, Body: &v})
}

// controlDo does the confirmed action (POST with the CSRF token).
func (c *Console) controlDo(w http.ResponseWriter, r *http.Request, s *session) {
	v, err := c.controlAsk(r)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	ctx, by := r.Context(), "console:"+s.id[:min(8, len(s.id))]
	switch v.Action {
	case "pause":
		err = c.o.Control.Pause(ctx, v.Agent, by)
		v.Done = fmt.Sprintf("%s is paused: it starts no new runs, and its wakes wait until it is resumed.", c.agentName(v.Agent))
	case "resume":
		var n int
		n, err = c.o.Control.Resume(ctx, v.Agent, by)
		v.Done = fmt.Sprintf("%s is resumed; %d waiting wakes were queued.", c.agentName(v.Agent), n)
	case "stop":
		var rep control.StopReport
		rep, err = c.o.Control.Stop(ctx, v.Root, by)
		v.Done = fmt.Sprintf("Chain %s is stopped: its runs end before their next model step, its queued wakes are dropped, %d pipeline executions were stopped.",
			v.Root, rep.Executions)
	}
	if err != nil {
		c.fail(w, r, err)
		return
	}
	c.render(w, r, http.StatusOK, page{Title: "Done", CSRF: s.csrf, Body: &v})
}

func (v *controlView) write(w *safehtml.Writer) {
	back := safehtml.Path("/console/", nil)
	if v.Action == "stop" {
		back = safehtml.Path("/console/chain", url.Values{"root": {v.Root}})
	}
	if v.Done != "" {
		w.El("h1", "Done")
		w.M("\n<p class=\"done\" role=\"status\">")
		w.Text(v.Done)
		w.M("</p>\n<p><a")
		w.Href("href", back)
		w.M(">Back</a></p>")
		return
	}
	what := map[string]string{
		"pause":  "Pause agent " + v.Agent + "? It starts no new runs; its wakes wait until you resume it (a run under way finishes).",
		"resume": "Resume agent " + v.Agent + "? The wakes that waited for it run now.",
		"stop":   "Stop chain " + v.Root + "? Its runs end before their next model step, its queued wakes are dropped and its waiting pipeline executions are stopped. This cannot be undone.",
	}[v.Action]
	w.El("h1", "Confirm "+v.Action)
	w.M("\n<p>")
	w.Text(what)
	w.M("</p>\n<form method=\"post\" action=\"/console/control\" id=\"control\">\n<input type=\"hidden\" name=\"csrf\"")
	w.Attr("value", v.CSRF)
	w.M(">\n<input type=\"hidden\" name=\"action\"")
	w.Attr("value", v.Action)
	w.M(">\n<input type=\"hidden\" name=\"agent\"")
	w.Attr("value", v.Agent)
	w.M(">\n<input type=\"hidden\" name=\"root\"")
	w.Attr("value", v.Root)
	w.M(">\n<button type=\"submit\">Yes, ")
	w.Text(v.Action)
	w.M("</button> <a")
	w.Href("href", back)
	w.M(">Cancel</a>\n</form>")
}

// controlLink is the confirmation page of an action.
func controlLink(action, key, value string) safehtml.URL {
	return safehtml.Path("/console/control", url.Values{"action": {action}, key: {value}})
}
