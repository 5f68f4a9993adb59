package nctool_test

import (
	"cmp"
	"fmt"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/tools/nctool"
)

// TestCallsPerAction pins how many WebDAV/OCS requests each action costs
// (counted by ncfake, by route), so that a change that adds a round trip
// shows up here. Collabora requests are counted separately.
func TestCallsPerAction(t *testing.T) {
	t.Parallel()
	type step struct{ action, args string }
	tests := []struct {
		name      string
		setup     func(e *env)
		call      step
		want      []string // routes in order
		collabora int
	}{
		{name: "upload into an existing folder", call: step{"upload", `{"localPath":"a.md","remotePath":"reports/a.md"}`},
			want: []string{"PUT files"}},
		{name: "upload creating two folders", call: step{"upload", `{"localPath":"a.md","remotePath":"x/y/a.md"}`},
			want: []string{"PUT files", "MKCOL files", "MKCOL files", "MKCOL files", "PUT files"}},
		{name: "upload, a file in the way", setup: func(e *env) { e.seed(root+"/notes.txt", "n") },
			call: step{"upload", `{"localPath":"a.md","remotePath":"notes.txt/a.md"}`},
			want: []string{"PUT files", "MKCOL files", "PUT files", "PROPFIND files"}},
		{name: "chunked upload creating a folder", setup: func(e *env) { e.chunked() },
			call: step{"upload", `{"localPath":"a.csv","remotePath":"x/a.csv"}`},
			want: []string{"MKCOL uploads", "PUT uploads", "DELETE uploads", "MKCOL files", "MKCOL uploads", "PUT uploads", "MOVE uploads"}},
		{name: "upload with overwrite false", call: step{"upload", `{"localPath":"a.md","remotePath":"reports/new.md","overwrite":false}`},
			want: []string{"PROPFIND files", "PUT files"}},
		{name: "upload of a locked report", setup: func(e *env) { e.nc.Lock(root + "/reports/q3.md") },
			call: step{"upload", `{"localPath":"a.md","remotePath":"reports/q3.md"}`}, want: []string{"PUT files", "PUT files"}},
		{name: "upload refused by scoping", call: step{"upload", `{"localPath":"a.md","remotePath":"../x.md"}`}, want: nil},
		{name: "download", call: step{"download", `{"path":"reports/q3.md"}`}, want: []string{"GET files"}},
		{name: "list", call: step{"list", `{"path":"reports"}`}, want: []string{"PROPFIND files"}},
		{name: "list depth 3", call: step{"list", `{"depth":3}`}, want: []string{"SEARCH dav"}},
		{name: "stat", call: step{"stat", `{"path":"reports/q3.md"}`}, want: []string{"PROPFIND files"}},
		{name: "mkdir new", call: step{"mkdir", `{"path":"reports/new"}`}, want: []string{"PROPFIND files", "MKCOL files"}},
		{name: "mkdir existing", call: step{"mkdir", `{"path":"reports"}`}, want: []string{"PROPFIND files"}},
		{name: "move", call: step{"move", `{"from":"reports/q3.md","to":"reports/q3-final.md"}`}, want: []string{"MOVE files"}},
		{name: "move into a new folder", call: step{"move", `{"from":"reports/q3.md","to":"archive/q3.md"}`},
			want: []string{"MOVE files", "MKCOL files", "MOVE files"}},
		{name: "delete", call: step{"delete", `{"path":"reports/q3.md"}`}, want: []string{"DELETE files"}},
		{name: "search", call: step{"search", `{"query":"q3"}`}, want: []string{"SEARCH dav"}},
		{name: "versions", call: step{"versions", `{"path":"reports/q3.md"}`}, want: []string{"PROPFIND files", "PROPFIND versions"}},
		{name: "restore_version", setup: func(e *env) { e.seed(root+"/reports/q3.md", "v2") },
			call: step{"restore_version", `{"path":"reports/q3.md","versionId":"VERSION"}`},
			want: []string{"PROPFIND files", "PROPFIND versions", "MOVE versions"}},
		{name: "trash list", call: step{"trash", `{"op":"list"}`}, want: []string{"PROPFIND trashbin"}},
		{name: "trash restore", setup: func(e *env) { e.invoke("delete", `{"path":"reports/q3.md"}`) },
			call: step{"trash", `{"op":"restore","id":"q3.md.d1777671000"}`}, want: []string{"PROPFIND trashbin", "MOVE trashbin"}},
		{name: "trash empty without confirm", setup: func(e *env) { e.invoke("delete", `{"path":"reports/q3.md"}`) },
			call: step{"trash", `{"op":"empty"}`}, want: []string{"PROPFIND trashbin"}},
		{name: "trash empty confirmed", setup: func(e *env) { e.invoke("delete", `{"path":"reports/q3.md"}`) },
			call: step{"trash", `{"op":"empty","confirm":true}`}, want: []string{"PROPFIND trashbin", "DELETE trashbin"}},
		{name: "favorite", call: step{"favorite", `{"path":"reports/q3.md"}`}, want: []string{"PROPPATCH files"}},
		{name: "quota", call: step{"quota", `{}`}, want: []string{"PROPFIND files"}},
		{name: "capabilities", call: step{"capabilities", `{"check":["sharing.public"]}`}, want: []string{"GET capabilities", "PROPFIND files"}},
		{name: "convert workspace to workspace", call: step{"convert", `{"localPath":"a.csv","format":"xlsx"}`}, want: nil, collabora: 1},
		{name: "convert Nextcloud to Nextcloud", call: step{"convert", `{"path":"reports/t.html","format":"pdf"}`},
			want: []string{"GET files", "PUT files"}, collabora: 1},
		{name: "share with a user", call: step{"share", `{"path":"reports/q3.md","shareWith":"richard"}`}, want: []string{"PROPFIND files", "POST shares"}},
		{name: "share of a missing path", call: step{"share", `{"path":"reports/gone.md","shareWith":"richard"}`}, want: []string{"PROPFIND files"}},
		{name: "share a link", call: step{"share", `{"path":"reports/q3.md","shareType":3}`}, want: []string{"GET capabilities", "PROPFIND files", "POST shares"}},
		{name: "share a folder link to one file", call: step{"share", `{"path":"reports","shareType":3,"file":"q3.md"}`},
			want: []string{"PROPFIND files", "GET capabilities", "POST shares"}},
		{name: "share a link, not allowed", setup: func(e *env) { e.configure(func(a *nctool.Agent) { a.AllowPublicShares = false }) },
			call: step{"share", `{"path":"reports/q3.md","shareType":3}`}, want: nil},
		{name: "shares", setup: shareTwice, call: step{"shares", `{}`}, want: []string{"GET shares"}},
		{name: "unshare by id", setup: shareTwice, call: step{"unshare", `{"shareId":"1"}`}, want: []string{"GET shares", "DELETE shares"}},
		{name: "unshare a path without confirm", setup: shareTwice, call: step{"unshare", `{"path":"reports/q3.md"}`}, want: []string{"GET shares"}},
		{name: "unshare a path confirmed", setup: shareTwice, call: step{"unshare", `{"path":"reports/q3.md","confirm":true}`},
			want: []string{"GET shares", "DELETE shares", "DELETE shares"}},
	}
	var table strings.Builder
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.configure(func(a *nctool.Agent) { a.AllowPublicShares = true })
			e.seed(root+"/reports/q3.md", "# Q3")
			e.seed(root+"/reports/t.html", "<p>t</p>")
			e.write("a.md", "a")
			e.write("a.csv", "a,b\n")
			if tt.setup != nil {
				tt.setup(e)
			}
			args := tt.call.args
			if strings.Contains(args, "VERSION") {
				vs, err := e.agent.Get().Client.Versions(t.Context(), e.nc.FileID(root+"/reports/q3.md"))
				if err != nil || len(vs) == 0 {
					t.Fatalf("no version to restore: %v", err)
				}
				// The oldest (the lowest name): the newest is the current content.
				oldest := slices.MinFunc(vs, func(a, b sb.FileVersion) int {
					x, _ := strconv.ParseInt(a.ID, 10, 64)
					y, _ := strconv.ParseInt(b.ID, 10, 64)
					return cmp.Compare(x, y)
				})
				args = strings.Replace(args, "VERSION", oldest.ID, 1)
			}
			e.nc.ResetRequests()
			before := len(e.co.Requests())
			env := e.invoke(tt.call.action, args)
			if got := e.routes(); !slices.Equal(got, tt.want) {
				t.Errorf("routes = %v, want %v (answer %+v)", got, tt.want, env)
			}
			if got := len(e.co.Requests()) - before; got != tt.collabora {
				t.Errorf("Collabora requests = %d, want %d", got, tt.collabora)
			}
			fmt.Fprintf(&table, "%-38s %d  %s\n", tt.name, len(tt.want), strings.Join(tt.want, ", "))
		})
	}
	t.Logf("WebDAV/OCS requests per action:\n%s", table.String())
}

// shareTwice creates two shares on reports/q3.md (ids 1 and 2).
func shareTwice(e *env) {
	e.ok(e.invoke("share", `{"path":"reports/q3.md","shareWith":"richard"}`))
	e.ok(e.invoke("share", `{"path":"reports/q3.md","shareWith":"anna"}`))
}
