package ncfake_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/nextcloud/ncfake"
)

// do sends a raw request as the account (auth=false: anonymous).
func do(t *testing.T, f *ncfake.Server, method, p string, body string, hdr map[string]string, auth bool) (*http.Response, string) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, f.URL+p, r)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if auth {
		req.SetBasicAuth(f.User(), f.Password())
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

const files = "/remote.php/dav/files/alice"

var ocs = map[string]string{"OCS-APIRequest": "true"}

func TestAuth(t *testing.T) {
	f := ncfake.Start(t, ncfake.Options{})
	resp, body := do(t, f, "PROPFIND", files+"/", "", nil, false)
	if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") != `Basic realm="Nextcloud", charset="UTF-8"` ||
		!strings.Contains(body, `<s:exception>Sabre\DAV\Exception\NotAuthenticated</s:exception>`) {
		t.Errorf("WebDAV without auth: %d %q %s", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
	}
	resp, body = do(t, f, "GET", "/ocs/v2.php/cloud/capabilities?format=json", "", ocs, false)
	if resp.StatusCode != 401 || !strings.Contains(body, `"statuscode":997`) {
		t.Errorf("OCS without auth: %d %s", resp.StatusCode, body)
	}
	resp, _ = do(t, f, "PROPFIND", "/remote.php/dav/files/bob/", "", nil, true)
	if resp.StatusCode != 404 {
		t.Errorf("another user's files: %d, want 404", resp.StatusCode)
	}
	for _, r := range f.Requests() {
		if r.Header.Get("Authorization") != "" {
			t.Errorf("recorded request keeps the Authorization header")
		}
	}
}

func TestCSRF412WithoutOCSHeader(t *testing.T) {
	f := ncfake.Start(t, ncfake.Options{})
	resp, body := do(t, f, "GET", "/ocs/v2.php/cloud/capabilities?format=json", "", nil, true)
	if resp.StatusCode != http.StatusPreconditionFailed || strings.TrimSpace(body) != `{"message":"CSRF check failed"}` {
		t.Errorf("got %d %s", resp.StatusCode, body)
	}
}

func TestPutHeadersAndStatus(t *testing.T) {
	f := ncfake.Start(t, ncfake.Options{})
	resp, body := do(t, f, "PUT", files+"/a.txt", "one", nil, true)
	if resp.StatusCode != 201 || body != "" {
		t.Fatalf("first PUT: %d %q", resp.StatusCode, body)
	}
	if !regexp.MustCompile(`^\d{8}ocfake0001$`).MatchString(resp.Header.Get("OC-FileId")) {
		t.Errorf("OC-FileId = %q", resp.Header.Get("OC-FileId"))
	}
	if e := resp.Header.Get("ETag"); !strings.HasPrefix(e, `"`) || e != resp.Header.Get("OC-ETag") {
		t.Errorf("ETag = %q, OC-ETag = %q", e, resp.Header.Get("OC-ETag"))
	}
	id := resp.Header.Get("OC-FileId")
	resp, body = do(t, f, "PUT", files+"/a.txt", "two", nil, true)
	if resp.StatusCode != 204 || body != "" || resp.Header.Get("OC-FileId") != id {
		t.Errorf("overwrite: %d %q id %q (want 204, same id %q)", resp.StatusCode, body, resp.Header.Get("OC-FileId"), id)
	}
	resp, body = do(t, f, "PUT", files+"/missing/a.txt", "x", nil, true)
	if resp.StatusCode != 404 || !strings.Contains(body, `Sabre\DAV\Exception\NotFound`) || !strings.Contains(body, "File with name /missing could not be located") {
		t.Errorf("PUT into a missing folder: %d %s (Nextcloud answers 404)", resp.StatusCode, body)
	}
	f.Lock("a.txt")
	resp, body = do(t, f, "PUT", files+"/a.txt", "x", nil, true)
	if resp.StatusCode != 423 || !strings.Contains(body, `<s:exception>OCA\DAV\Connector\Sabre\Exception\FileLocked</s:exception>`) ||
		!strings.Contains(body, `a.txt&#34; is locked`) {
		t.Errorf("locked PUT: %d %s", resp.StatusCode, body)
	}
	f.Unlock("a.txt")
	f.SetQuota(4)
	resp, body = do(t, f, "PUT", files+"/b.txt", "12345", nil, true)
	if resp.StatusCode != 507 || !strings.Contains(body, "Insufficient space") {
		t.Errorf("over quota: %d %s", resp.StatusCode, body)
	}
}

func TestPropfindServesNextcloudProps(t *testing.T) {
	f := ncfake.Start(t, ncfake.Options{})
	f.WriteFile("Docs/a.txt", []byte("hello"))
	body := `<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns">
<d:prop><d:getetag/><oc:fileid/><oc:permissions/><oc:size/><oc:share-types/><oc:favorite/><d:getcontentlength/><nc:nope/></d:prop></d:propfind>`
	resp, out := do(t, f, "PROPFIND", files+"/Docs", body, map[string]string{"Depth": "1"}, true)
	if resp.StatusCode != 207 {
		t.Fatalf("PROPFIND: %d %s", resp.StatusCode, out)
	}
	for _, want := range []string{
		`<D:href>/remote.php/dav/files/alice/Docs/</D:href>`,
		`<D:href>/remote.php/dav/files/alice/Docs/a.txt</D:href>`,
		`<permissions xmlns="http://owncloud.org/ns">RGDNVCK</permissions>`,
		`<permissions xmlns="http://owncloud.org/ns">RGDNVW</permissions>`,
		`<size xmlns="http://owncloud.org/ns">5</size>`,
		`<favorite xmlns="http://owncloud.org/ns">0</favorite>`,
		`HTTP/1.1 404 Not Found`, // nc:nope and the folder's getcontentlength
	} {
		if !strings.Contains(out, want) {
			t.Errorf("PROPFIND answer lacks %s\n%s", want, out)
		}
	}
	patch := `<?xml version="1.0"?><d:propertyupdate xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:set><d:prop><oc:fileid>1</oc:fileid></d:prop></d:set></d:propertyupdate>`
	_, out = do(t, f, "PROPPATCH", files+"/Docs/a.txt", patch, nil, true)
	if !strings.Contains(out, "HTTP/1.1 403 Forbidden") {
		t.Errorf("PROPPATCH of oc:fileid was not refused:\n%s", out)
	}
}

func TestMoveDefaultsToOverwrite(t *testing.T) {
	f := ncfake.Start(t, ncfake.Options{})
	f.WriteFile("a.txt", []byte("a"))
	f.WriteFile("b.txt", []byte("b"))
	resp, _ := do(t, f, "MOVE", files+"/a.txt", "", map[string]string{"Destination": f.URL + files + "/b.txt"}, true)
	if resp.StatusCode != 204 {
		t.Fatalf("MOVE without Overwrite: %d, want 204 (Sabre defaults to T)", resp.StatusCode)
	}
	if b, _ := f.File("b.txt"); string(b) != "a" {
		t.Errorf("b.txt = %q", b)
	}
}

func TestUploadsCollection(t *testing.T) {
	f := ncfake.Start(t, ncfake.Options{})
	up := "/remote.php/dav/uploads/alice/u1"
	dest := map[string]string{"Destination": f.URL + files + "/big.bin"}
	if resp, _ := do(t, f, "MKCOL", up, "", dest, true); resp.StatusCode != 201 {
		t.Fatalf("MKCOL: %d", resp.StatusCode)
	}
	if resp, _ := do(t, f, "MKCOL", up, "", dest, true); resp.StatusCode != 405 {
		t.Errorf("second MKCOL: %d, want 405", resp.StatusCode)
	}
	for _, name := range []string{"0", "10001", "x"} {
		if resp, body := do(t, f, "PUT", up+"/"+name, "data", dest, true); resp.StatusCode != 400 || !strings.Contains(body, "Invalid chunk name") {
			t.Errorf("chunk %q: %d %s", name, resp.StatusCode, body)
		}
	}
	if resp, _ := do(t, f, "PUT", up+"/1", "abc", dest, true); resp.StatusCode != 201 {
		t.Errorf("chunk 1: %d", resp.StatusCode)
	}
	if resp, _ := do(t, f, "GET", up+"/1", "", nil, true); resp.StatusCode != 405 {
		t.Errorf("GET chunk: %d, want 405", resp.StatusCode)
	}
	move := map[string]string{"Destination": f.URL + files + "/big.bin", "OC-Total-Length": "4"}
	if resp, body := do(t, f, "MOVE", up+"/.file", "", move, true); resp.StatusCode != 400 || !strings.Contains(body, "do not sum up to 4 but to 3") {
		t.Errorf("wrong total: %d %s", resp.StatusCode, body)
	}
	move["OC-Total-Length"] = "3"
	resp, _ := do(t, f, "MOVE", up+"/.file", "", move, true)
	if resp.StatusCode != 201 || resp.Header.Get("OC-FileId") == "" {
		t.Errorf("assemble: %d, OC-FileId %q", resp.StatusCode, resp.Header.Get("OC-FileId"))
	}
	if f.PendingUploads() != 0 {
		t.Errorf("upload not removed after assembly")
	}
	f.SetChunking(false)
	if resp, _ := do(t, f, "MKCOL", "/remote.php/dav/uploads/alice/u2", "", dest, true); resp.StatusCode != 404 {
		t.Errorf("MKCOL with chunking off: %d, want 404", resp.StatusCode)
	}
}

func TestOCSVersions(t *testing.T) {
	f := ncfake.Start(t, ncfake.Options{})
	type env struct {
		OCS struct {
			Meta map[string]any  `json:"meta"`
			Data json.RawMessage `json:"data"`
		} `json:"ocs"`
	}
	tests := []struct {
		path           string
		wantHTTP       int
		wantStatusCode float64
		wantTotalItems bool
	}{
		{"/ocs/v2.php/cloud/capabilities?format=json", 200, 200, false},
		{"/ocs/v1.php/cloud/capabilities?format=json", 200, 100, true},
		{"/ocs/v2.php/apps/files_sharing/api/v1/shares/42?format=json", 404, 404, false},
		{"/ocs/v1.php/apps/files_sharing/api/v1/shares/42?format=json", 200, 404, true},
		{"/ocs/v2.php/apps/nope?format=json", 404, 998, false},
	}
	for _, tt := range tests {
		resp, body := do(t, f, "GET", tt.path, "", ocs, true)
		var e env
		if err := json.Unmarshal([]byte(body), &e); err != nil {
			t.Fatalf("%s: %v\n%s", tt.path, err, body)
		}
		_, hasTotal := e.OCS.Meta["totalitems"]
		if resp.StatusCode != tt.wantHTTP || e.OCS.Meta["statuscode"] != tt.wantStatusCode || hasTotal != tt.wantTotalItems {
			t.Errorf("%s: HTTP %d meta %v", tt.path, resp.StatusCode, e.OCS.Meta)
		}
	}
}

func TestShareByIDAnswersAnArray(t *testing.T) {
	f := ncfake.Start(t, ncfake.Options{})
	f.WriteFile("a.txt", []byte("a"))
	form := url.Values{"path": {"/a.txt"}, "shareType": {"3"}}.Encode()
	hdr := map[string]string{"OCS-APIRequest": "true", "Content-Type": "application/x-www-form-urlencoded"}
	resp, body := do(t, f, "POST", "/ocs/v2.php/apps/files_sharing/api/v1/shares?format=json", form, hdr, true)
	if resp.StatusCode != 200 {
		t.Fatalf("create: %d %s", resp.StatusCode, body)
	}
	var created struct {
		OCS struct {
			Data struct {
				ID          string `json:"id"`
				Permissions int    `json:"permissions"`
				Token       string `json:"token"`
				URL         string `json:"url"`
			} `json:"data"`
		} `json:"ocs"`
	}
	json.Unmarshal([]byte(body), &created)
	d := created.OCS.Data
	if d.ID == "" || d.Permissions != 17 || len(d.Token) != 15 || d.URL != f.URL+"/s/"+d.Token {
		t.Errorf("created share = %+v", d)
	}
	_, body = do(t, f, "GET", "/ocs/v2.php/apps/files_sharing/api/v1/shares/"+d.ID+"?format=json", "", ocs, true)
	if !strings.Contains(body, `"data":[{`) {
		t.Errorf("GET by id: %s", body)
	}
	_, body = do(t, f, "DELETE", "/ocs/v2.php/apps/files_sharing/api/v1/shares/"+d.ID+"?format=json", "", ocs, true)
	if !strings.Contains(body, `"data":[]`) {
		t.Errorf("DELETE answer: %s", body)
	}
}

func TestSearchRejectsWhatItDoesNotKnow(t *testing.T) {
	f := ncfake.Start(t, ncfake.Options{})
	body := `<?xml version="1.0"?><d:searchrequest xmlns:d="DAV:"><d:basicsearch><d:select><d:prop><d:getetag/></d:prop></d:select>
<d:from><d:scope><d:href>/files/alice</d:href><d:depth>infinity</d:depth></d:scope></d:from>
<d:where><d:like><d:prop><d:owner/></d:prop><d:literal>x</d:literal></d:like></d:where></d:basicsearch></d:searchrequest>`
	resp, out := do(t, f, "SEARCH", "/remote.php/dav/", body, map[string]string{"Content-Type": "text/xml"}, true)
	if resp.StatusCode != 400 || !strings.Contains(out, "unsupported property") {
		t.Errorf("SEARCH on d:owner: %d %s", resp.StatusCode, out)
	}
	if resp, _ := do(t, f, "GET", "/remote.php/dav/", "", nil, true); resp.StatusCode != 405 {
		t.Errorf("GET /remote.php/dav/: %d, want 405", resp.StatusCode)
	}
}

func TestDownAndCalls(t *testing.T) {
	f := ncfake.Start(t, ncfake.Options{})
	f.SetDown(true)
	resp, body := do(t, f, "PROPFIND", files+"/", "", nil, true)
	if resp.StatusCode != 503 || !strings.Contains(body, "ServiceUnavailable") {
		t.Errorf("down: %d %s", resp.StatusCode, body)
	}
	f.SetDown(false)
	do(t, f, "PROPFIND", files+"/", "", nil, true)
	if got := f.Calls("PROPFIND files"); got != 2 {
		t.Errorf("Calls(PROPFIND files) = %d, want 2", got)
	}
	reqs := f.Requests()
	if len(reqs) != 2 || reqs[0].Status != 503 || reqs[1].Status != 207 || reqs[1].User != "alice" {
		t.Errorf("Requests = %+v", reqs)
	}
	f.ResetRequests()
	if len(f.Requests()) != 0 || f.Calls("PROPFIND files") != 0 {
		t.Errorf("ResetRequests kept records")
	}
}

func TestRateLimitSwitchesAndClock(t *testing.T) {
	f := ncfake.Start(t, ncfake.Options{})
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	f.SetClock(func() time.Time { return now })
	f.SetShareRateLimit(2, time.Minute)
	f.WriteFile("a.txt", []byte("a"))
	if f.FileID("a.txt") == 0 || f.FileID("missing") != 0 {
		t.Errorf("FileID = %d / %d", f.FileID("a.txt"), f.FileID("missing"))
	}
	form := url.Values{"path": {"/a.txt"}, "shareType": {"3"}}.Encode()
	hdr := map[string]string{"OCS-APIRequest": "true", "Content-Type": "application/x-www-form-urlencoded"}
	create := func() *http.Response {
		resp, _ := do(t, f, "POST", "/ocs/v2.php/apps/files_sharing/api/v1/shares?format=json", form, hdr, true)
		return resp
	}
	create()
	now = now.Add(15 * time.Second)
	create()
	resp := create()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "" || resp.ContentLength != 0 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Errorf("third share: %d Retry-After %q length %d type %q, want Nextcloud's bare 429 (no Retry-After, empty text/html)",
			resp.StatusCode, resp.Header.Get("Retry-After"), resp.ContentLength, resp.Header.Get("Content-Type"))
	}
	now = now.Add(45 * time.Second)
	if resp := create(); resp.StatusCode != 200 {
		t.Errorf("after the window: %d", resp.StatusCode)
	}
	if f.Shares() != 3 {
		t.Errorf("Shares() = %d, want 3", f.Shares())
	}
}

func TestFailNextBeforeAndAfterTheWork(t *testing.T) {
	f := ncfake.Start(t, ncfake.Options{})
	f.FailNext("PUT files", 503)
	resp, body := do(t, f, "PUT", files+"/a.txt", "one", nil, true)
	if resp.StatusCode != 503 || !strings.Contains(body, "nginx") {
		t.Errorf("FailNext: %d %s, want the proxy's 503", resp.StatusCode, body)
	}
	if _, err := f.File("/a.txt"); err == nil {
		t.Error("a request failed before Nextcloud wrote the file")
	}
	f.FailNextAfter("PUT files", 502)
	resp, _ = do(t, f, "PUT", files+"/a.txt", "two", nil, true)
	if got, err := f.File("/a.txt"); resp.StatusCode != 502 || err != nil || string(got) != "two" {
		t.Errorf("FailNextAfter: %d, file %q %v; want 502 and the file written", resp.StatusCode, got, err)
	}
	resp, _ = do(t, f, "PUT", files+"/a.txt", "three", nil, true)
	if resp.StatusCode != 204 {
		t.Errorf("third PUT: %d, want 204 (faults are used once)", resp.StatusCode)
	}
	if n := f.Calls("PUT files"); n != 3 {
		t.Errorf("Calls(PUT files) = %d, want 3", n)
	}
}

func TestFailNextChunkFailsThatChunkOnly(t *testing.T) {
	f := ncfake.Start(t, ncfake.Options{})
	up := "/remote.php/dav/uploads/alice/u1"
	dest := map[string]string{"Destination": f.URL + files + "/big.bin"}
	do(t, f, "MKCOL", up, "", dest, true)
	f.FailNextChunk(2, 503)
	if resp, _ := do(t, f, "PUT", up+"/00001", "abc", dest, true); resp.StatusCode != 201 {
		t.Errorf("chunk 1: %d, want 201", resp.StatusCode)
	}
	if resp, body := do(t, f, "PUT", up+"/00002", "def", dest, true); resp.StatusCode != 503 || !strings.Contains(body, "nginx") {
		t.Errorf("chunk 2: %d %s, want the proxy's 503", resp.StatusCode, body)
	}
	if resp, _ := do(t, f, "PUT", up+"/00002", "def", dest, true); resp.StatusCode != 201 {
		t.Errorf("chunk 2 again: %d, want 201", resp.StatusCode)
	}
}
