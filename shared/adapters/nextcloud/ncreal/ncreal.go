// Package ncreal gives tests a real Nextcloud: the server named by the
// environment, with a fresh account per test made through the provisioning
// API, so that per-user limits (20 share creations per 10 minutes) and files
// never leak from one test into another.
//
//	SWITCHBOARD_NEXTCLOUD_URL             the server, e.g. http://127.0.0.1:8790
//	SWITCHBOARD_NEXTCLOUD_ADMIN_USER      an admin account (default "admin")
//	SWITCHBOARD_NEXTCLOUD_ADMIN_PASSWORD  its password (or an app password)
//	SWITCHBOARD_REQUIRE_NEXTCLOUD=1       fail instead of skip when the URL is unset
//
// scripts/nextcloud-test.sh starts a throwaway server and prints these
// variables; `make test` runs it when SWITCHBOARD_NEXTCLOUD_TARBALL names a
// release. Accounts are named sbt-<random>-<role> and deleted when the test
// ends.
package ncreal

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Environment variables the package reads.
const (
	EnvURL           = "SWITCHBOARD_NEXTCLOUD_URL"
	EnvAdminUser     = "SWITCHBOARD_NEXTCLOUD_ADMIN_USER"
	EnvAdminPassword = "SWITCHBOARD_NEXTCLOUD_ADMIN_PASSWORD"
	EnvRequire       = "SWITCHBOARD_REQUIRE_NEXTCLOUD"
)

// Server is a real Nextcloud the tests may create accounts on.
type Server struct {
	URL       string // without a trailing slash
	adminUser string
	adminPass string
	hc        *http.Client
}

// FromEnv returns the server named by the environment. Without
// SWITCHBOARD_NEXTCLOUD_URL it skips the test, or fails it when
// SWITCHBOARD_REQUIRE_NEXTCLOUD=1 (CI sets it, so the real tier cannot
// silently vanish there). A server that does not answer fails the test.
// Tests of different test binaries on one server take turns (takeTurns).
func FromEnv(tb testing.TB) *Server {
	tb.Helper()
	raw := strings.TrimRight(os.Getenv(EnvURL), "/")
	if raw == "" {
		if os.Getenv(EnvRequire) == "1" {
			tb.Fatalf("%s=1 but %s is unset: start a server with scripts/nextcloud-test.sh (or make test with SWITCHBOARD_NEXTCLOUD_TARBALL) or point %s at yours", EnvRequire, EnvURL, EnvURL)
		}
		tb.Skipf("no real Nextcloud: set %s (and %s, %s) to run this against one", EnvURL, EnvAdminUser, EnvAdminPassword)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		tb.Fatalf("%s=%q is not a URL", EnvURL, raw)
	}
	s := &Server{URL: raw, adminUser: os.Getenv(EnvAdminUser), adminPass: os.Getenv(EnvAdminPassword),
		hc: &http.Client{Timeout: 60 * time.Second}}
	if s.adminUser == "" {
		s.adminUser = "admin"
	}
	if s.adminPass == "" {
		tb.Fatalf("%s is set but %s is not: the tests create their accounts as an admin", EnvURL, EnvAdminPassword)
	}
	takeTurns(tb, s.URL)
	resp, err := s.hc.Get(s.URL + "/status.php")
	if err != nil {
		tb.Fatalf("the Nextcloud at %s does not answer: %v", s.URL, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"installed":true`) {
		tb.Fatalf("the Nextcloud at %s is not ready: status.php answered %d %s", s.URL, resp.StatusCode, body)
	}
	return s
}

// turn is this process's hold on the machine-wide lock of one server.
var turn struct {
	sync.Mutex
	held int // tests of this process that hold it
	f    *os.File
}

// takeTurns makes the tests of different test binaries that use the server
// at u take turns, until tb ends: go test runs packages in parallel, and a
// Nextcloud on SQLite (the throwaway one) answers writes that meet another
// request's with "database is locked" — a new account then fails with HTTP
// 400, OCS 101 "Bad request". The lock is a file in the temporary folder,
// one per server URL; the tests of one process share it.
func takeTurns(tb testing.TB, u string) {
	tb.Helper()
	turn.Lock()
	defer turn.Unlock()
	if turn.held == 0 {
		sum := sha256.Sum256([]byte(u))
		p := filepath.Join(os.TempDir(), "switchboard-ncreal-"+hex.EncodeToString(sum[:6])+".lock")
		f, err := os.OpenFile(p, os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			tb.Fatalf("the lock that makes test binaries take turns on %s: %v", u, err)
		}
		start := time.Now()
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			f.Close()
			tb.Fatalf("the lock %s that makes test binaries take turns on %s: %v", p, u, err)
		}
		if waited := time.Since(start); waited > time.Second {
			tb.Logf("waited %v for another test binary's tests on %s", waited.Round(100*time.Millisecond), u)
		}
		turn.f = f
	}
	turn.held++
	tb.Cleanup(func() {
		turn.Lock()
		defer turn.Unlock()
		if turn.held--; turn.held == 0 {
			_ = syscall.Flock(int(turn.f.Fd()), syscall.LOCK_UN)
			turn.f.Close()
			turn.f = nil
		}
	})
}

// Account is one fresh user of the server.
type Account struct {
	User        string
	Password    string // an app password, as Switchboard is configured with
	LoginPass   string // the login password (the web login, public-link tests)
	DisplayName string
}

// NewAccount creates the user sbt-<random>-<role> with a 1 GB quota and an
// app password, and deletes it when the test ends.
func (s *Server) NewAccount(tb testing.TB, role string) Account {
	tb.Helper()
	var b [4]byte
	rand.Read(b[:])
	a := Account{User: "sbt-" + hex.EncodeToString(b[:]) + "-" + role, DisplayName: "Test " + role}
	var p [12]byte
	rand.Read(p[:])
	a.LoginPass = hex.EncodeToString(p[:]) // 24 characters: long enough for any password policy
	form := url.Values{"userid": {a.User}, "password": {a.LoginPass}, "displayName": {a.DisplayName}}
	if _, err := s.ocs(http.MethodPost, "/ocs/v2.php/cloud/users", s.adminUser, s.adminPass, form); err != nil {
		tb.Fatalf("create the test account %s: %v", a.User, err)
	}
	tb.Cleanup(func() {
		if _, err := s.ocs(http.MethodDelete, "/ocs/v2.php/cloud/users/"+url.PathEscape(a.User), s.adminUser, s.adminPass, nil); err != nil {
			tb.Logf("delete the test account %s: %v", a.User, err)
		}
	})
	if _, err := s.ocs(http.MethodPut, "/ocs/v2.php/cloud/users/"+url.PathEscape(a.User), s.adminUser, s.adminPass,
		url.Values{"key": {"quota"}, "value": {"1073741824"}}); err != nil {
		tb.Fatalf("set the quota of %s: %v", a.User, err)
	}
	data, err := s.ocs(http.MethodGet, "/ocs/v2.php/core/getapppassword", a.User, a.LoginPass, nil)
	if err != nil {
		tb.Fatalf("app password for %s: %v", a.User, err)
	}
	var ap struct {
		AppPassword string `json:"apppassword"`
	}
	if err := json.Unmarshal(data, &ap); err != nil || ap.AppPassword == "" {
		tb.Fatalf("app password for %s: %v %s", a.User, err, data)
	}
	a.Password = ap.AppPassword
	return a
}

// Lock makes holder take a files_lock lock on owner's file p, as a person
// with the file open would: owner shares p with holder with update
// permission (a read-only share cannot be locked), holder locks it. Until
// the returned unlock runs, owner's PUT and DELETE on p answer 423.
func (s *Server) Lock(tb testing.TB, owner, holder Account, p string) (unlock func()) {
	tb.Helper()
	p = "/" + strings.TrimLeft(p, "/")
	form := url.Values{"path": {p}, "shareType": {"0"}, "shareWith": {holder.User}, "permissions": {"19"}}
	data, err := s.ocs(http.MethodPost, "/ocs/v2.php/apps/files_sharing/api/v1/shares", owner.User, owner.Password, form)
	if err != nil {
		tb.Fatalf("share %s with %s for the lock: %v", p, holder.User, err)
	}
	var sh struct {
		FileSource json.Number `json:"file_source"`
	}
	if err := json.Unmarshal(data, &sh); err != nil || sh.FileSource == "" {
		tb.Fatalf("share %s: no file_source in %s", p, data)
	}
	lockPath := "/ocs/v2.php/apps/files_lock/lock/" + sh.FileSource.String()
	if _, err := s.ocs(http.MethodPut, lockPath, holder.User, holder.LoginPass, nil); err != nil {
		tb.Fatalf("%s locks %s (files_lock): %v", holder.User, p, err)
	}
	return func() {
		if _, err := s.ocs(http.MethodDelete, lockPath, holder.User, holder.LoginPass, nil); err != nil {
			tb.Errorf("%s unlocks %s: %v", holder.User, p, err)
		}
	}
}

// Read returns the bytes of p as account a sees it (for a share recipient,
// p is the path in the recipient's own files).
func (s *Server) Read(tb testing.TB, a Account, p string) ([]byte, int) {
	tb.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet,
		s.URL+"/remote.php/dav/files/"+url.PathEscape(a.User)+escape(p), nil)
	req.SetBasicAuth(a.User, a.LoginPass)
	resp, err := s.hc.Do(req)
	if err != nil {
		tb.Fatalf("GET %s as %s: %v", p, a.User, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return body, resp.StatusCode
}

func escape(p string) string {
	segs := strings.Split("/"+strings.TrimLeft(p, "/"), "/")
	for i, seg := range segs {
		segs[i] = url.PathEscape(seg)
	}
	return strings.Join(segs, "/")
}

// ocs sends one OCS request and returns ocs.data; a non-2xx status or an
// OCS failure is an error naming both.
func (s *Server) ocs(method, path, user, pass string, form url.Values) (json.RawMessage, error) {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(context.Background(), method, s.URL+path+"?format=json", body)
	if err != nil {
		return nil, err
	}
	req.SetBasicAuth(user, pass)
	req.Header.Set("OCS-APIRequest", "true")
	req.Header.Set("Accept", "application/json")
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := s.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var env struct {
		OCS struct {
			Meta struct {
				StatusCode int    `json:"statuscode"`
				Message    string `json:"message"`
			} `json:"meta"`
			Data json.RawMessage `json:"data"`
		} `json:"ocs"`
	}
	if err := json.Unmarshal(raw, &env); err != nil || resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("%s %s: HTTP %d %.300s", method, path, resp.StatusCode, raw)
	}
	if c := env.OCS.Meta.StatusCode; c != 100 && c != 200 {
		return nil, fmt.Errorf("%s %s: OCS %s %s", method, path, strconv.Itoa(c), env.OCS.Meta.Message)
	}
	return env.OCS.Data, nil
}
