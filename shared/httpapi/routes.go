package httpapi

import (
	"fmt"
	"log/slog"
	"net/http"
	"sort"

	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
)

// Routes is the one route table: every route the deploy catalogue lists
// for each function in endpoints (deploy.Function.Routes), served by that
// function's handler. A GET route answers HEAD too, explicitly, so that
// the HEAD budget applies. The Lambda of one function mounts its own
// entry; the dev listener mounts all of them on one mux and adds its own
// routes. A name the catalogue does not know, or a catalogued function
// without routes, is a wiring mistake and an error.
func Routes(endpoints map[string]http.Handler) (*http.ServeMux, error) {
	names := make([]string, 0, len(endpoints))
	for n := range endpoints {
		names = append(names, n)
	}
	sort.Strings(names)
	mux := http.NewServeMux()
	for _, name := range names {
		fn, ok := deploy.FunctionByName(name)
		if !ok || len(fn.Routes) == 0 {
			return nil, fmt.Errorf("httpapi: function %q has no routes in the deploy catalogue", name)
		}
		for _, r := range fn.Routes {
			mux.Handle(r.Method+" "+r.Path, endpoints[name])
			if r.Method == http.MethodGet {
				mux.Handle(http.MethodHead+" "+r.Path, endpoints[name])
			}
		}
	}
	return mux, nil
}

// Serve wraps a route table the same way for every listener: the route
// budgets inside, the outbound scrubbing outside (so that a budget's own
// answer is scrubbed too).
func Serve(routes *http.ServeMux, log *slog.Logger, s *scrub.Scrubber) http.Handler {
	return ScrubResponses(WithBudgets(routes, log), s)
}
