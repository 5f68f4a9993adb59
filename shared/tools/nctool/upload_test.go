package nctool_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/adapters/nextcloud"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/nctool"
)

// chunked makes every upload of more than one byte a chunked upload v2.
func (e *env) chunked() {
	e.t.Helper()
	if err := e.agent.Get().Client.(*nextcloud.Client).SetChunking(nextcloud.Chunking{Mode: nextcloud.ChunkAlways, Threshold: 1}); err != nil {
		e.t.Fatalf("SetChunking: %v", err)
	}
}

// Nextcloud 34 answers a PUT into a missing folder with 404 (RFC 4918
// servers with 409); either way the tool walks the folders once and
// retries once.
func TestUploadIntoMissingFoldersOn404(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.seed(root+"/keep.md", "k")
	e.write("a.md", "a")
	e.nc.ResetRequests()
	env := e.ok(e.invoke("upload", `{"localPath":"a.md","remotePath":"x/y/a.md"}`))
	if got, _ := e.file(root + "/x/y/a.md"); got != "a" {
		t.Fatalf("file = %q", got)
	}
	if !strings.Contains(env.Data["message"].(string), "created the missing folders") {
		t.Errorf("message = %q", env.Data["message"])
	}
	want := []string{"PUT files", "MKCOL files", "MKCOL files", "MKCOL files", "PUT files"}
	if got := e.routes(); !slices.Equal(got, want) {
		t.Errorf("routes = %v, want %v", got, want)
	}
	if s := e.nc.Requests()[0].Status; s != 404 {
		t.Errorf("the first PUT answered %d; the fake no longer answers a PUT into a missing folder with 404 as Nextcloud 34 does", s)
	}
}

func TestChunkedUploadIntoMissingFolders(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.seed(root+"/keep.md", "k")
	e.chunked()
	e.write("big.csv", "a,b\n1,2\n")
	e.nc.ResetRequests()
	env := e.ok(e.invoke("upload", `{"localPath":"big.csv","remotePath":"reports/2026/big.csv"}`))
	if got, _ := e.file(root + "/reports/2026/big.csv"); got != "a,b\n1,2\n" {
		t.Fatalf("file = %q", got)
	}
	if env.Data["chunked"] != true || !strings.Contains(env.Data["message"].(string), "created the missing folders") {
		t.Errorf("answer = %+v", env.Data)
	}
	// The chunk PUT into the missing folder answers 404; the client drops
	// that upload, the tool creates the folders and uploads once more.
	want := []string{"MKCOL uploads", "PUT uploads", "DELETE uploads",
		"MKCOL files", "MKCOL files", "MKCOL files", "MKCOL uploads", "PUT uploads", "MOVE uploads"}
	if got := e.routes(); !slices.Equal(got, want) {
		t.Errorf("routes = %v, want %v", got, want)
	}
	if n := e.nc.PendingUploads(); n != 0 {
		t.Errorf("%d chunked uploads left on the server", n)
	}
}

func TestUploadWithAFileInTheWay(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, remote string
		chunked      bool
	}{
		{"file is the parent", "notes.txt/a.md", false},
		{"file further up", "notes.txt/sub/a.md", false},
		{"chunked, file is the parent", "notes.txt/a.md", true},
		{"chunked, file further up", "notes.txt/sub/a.md", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.seed(root+"/notes.txt", "n")
			if tt.chunked {
				e.chunked()
			}
			e.write("a.md", "abc")
			env := e.failed(e.invoke("upload", `{"localPath":"a.md","remotePath":"`+tt.remote+`"}`), sb.ECONFLICT,
				"/notes.txt is a file, but /"+tt.remote+" needs a folder of that name", "choose another remotePath", "move or rename /notes.txt")
			if env.HTTPStatus == 0 || env.Endpoint == "" {
				t.Errorf("envelope names no server answer: %+v", env)
			}
			if got, _ := e.file(root + "/notes.txt"); got != "n" {
				t.Errorf("the file in the way changed to %q", got)
			}
			if n := e.nc.PendingUploads(); n != 0 {
				t.Errorf("%d chunked uploads left on the server", n)
			}
		})
	}
}

// The last step of a chunked upload reports what is in the way with its
// own statuses on Nextcloud 34: 415 "The destination node is not a
// collection" (a file where the folder is), 400 "… is a directory".
func TestChunkedUploadFinishFailures(t *testing.T) {
	t.Parallel()
	t.Run("415", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.seed(root+"/reports/old.md", "o")
		e.chunked()
		e.write("a.md", "abc")
		e.nc.FailNext("MOVE uploads", 415)
		env := e.failed(e.invoke("upload", `{"localPath":"a.md","remotePath":"reports/a.md"}`), sb.ECONFLICT,
			"a folder on the way to /reports/a.md cannot be created because a file has its name", "move the file away")
		if env.HTTPStatus != 415 {
			t.Errorf("http_status = %d, want 415", env.HTTPStatus)
		}
	})
	t.Run("400 onto a folder", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.seed(root+"/reports/old.md", "o")
		e.chunked()
		e.write("a.md", "abc")
		e.nc.FailNext("MOVE uploads", 400)
		e.failed(e.invoke("upload", `{"localPath":"a.md","remotePath":"reports"}`), sb.ECONFLICT,
			"/reports is a folder", "end the path with /")
	})
	t.Run("400 for another reason", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.seed(root+"/reports/old.md", "o")
		e.chunked()
		e.write("a.md", "abc")
		e.nc.FailNext("MOVE uploads", 400)
		e.failed(e.invoke("upload", `{"localPath":"a.md","remotePath":"reports/a.md"}`), sb.EINVALID, "HTTP 400")
	})
}

// upload answers file_id and link, the server's internal link
// {baseUrl}/f/{fileid}, which a delivery without a share posts.
func TestUploadAnswersFileIDAndLink(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write("a.md", "a")
	d := e.ok(e.invoke("upload", `{"localPath":"a.md","remotePath":"reports/a.md"}`)).Data
	id := e.nc.FileID(root + "/reports/a.md")
	if d["file_id"] != float64(id) || d["fileid"] != float64(id) {
		t.Errorf("file_id %v fileid %v, want %d", d["file_id"], d["fileid"], id)
	}
	if want := fmt.Sprintf("https://cloud.example.org/f/%d", id); d["link"] != want {
		t.Errorf("link = %v, want %s", d["link"], want)
	}

	t.Run("without OC-FileId", func(t *testing.T) {
		// A proxy that drops the header: one PROPFIND finds the id.
		c := e.intercept(func(w http.ResponseWriter, r *http.Request) bool {
			if r.Method != http.MethodPut {
				return false
			}
			rec := httptest.NewRecorder()
			e.nc.ServeHTTP(rec, r)
			for k, v := range rec.Header() {
				if k != "Oc-Fileid" {
					w.Header()[k] = v
				}
			}
			w.WriteHeader(rec.Code)
			w.Write(rec.Body.Bytes())
			return true
		})
		e.configure(func(a *nctool.Agent) { a.Client = c })
		e.nc.ResetRequests()
		d := e.ok(e.invoke("upload", `{"localPath":"a.md","remotePath":"reports/b.md"}`)).Data
		id := e.nc.FileID(root + "/reports/b.md")
		if d["file_id"] != float64(id) || d["link"] != fmt.Sprintf("https://cloud.example.org/f/%d", id) {
			t.Errorf("answer = %+v, want file_id %d and its link", d, id)
		}
		if got, want := e.routes(), []string{"PUT files", "PROPFIND files"}; !slices.Equal(got, want) {
			t.Errorf("routes = %v, want %v", got, want)
		}
	})
	t.Run("without baseUrl", func(t *testing.T) {
		e.configure(func(a *nctool.Agent) { a.BaseURL = "" })
		d := e.ok(e.invoke("upload", `{"localPath":"a.md","remotePath":"reports/c.md"}`)).Data
		if _, ok := d["link"]; ok || d["file_id"] == float64(0) {
			t.Errorf("answer = %+v, want file_id and no link", d)
		}
	})
}
