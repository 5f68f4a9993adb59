package ncfake

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

const (
	ocsUnauthorised = 997
	ocsNotFound     = 998
)

// share is one share the account created. It follows the file by id, as
// Nextcloud's shares follow the file cache entry.
type share struct {
	id         int
	typ        int
	fileID     int64
	itemType   string
	shareWith  string
	perms      int
	token      string
	password   string
	expiration time.Time // zero = none
	note       string
	label      string
	stime      time.Time
}

// writeOCS writes an OCS envelope. v1 answers HTTP 200 for everything but
// 997 (→ 401); v2 answers the status code itself, with 997 → 401,
// 998 → 404, 996/999 → 500 and codes outside 200–600 → 400.
func writeOCS(w http.ResponseWriter, r *http.Request, code int, message string, data any) {
	v1 := strings.HasPrefix(r.URL.Path, "/ocs/v1.php")
	okCode := 200
	if v1 {
		okCode = 100
	}
	status := "failure"
	if code == 200 || code == 100 {
		code, status = okCode, "ok"
	}
	httpStatus := http.StatusOK
	switch {
	case code == ocsUnauthorised:
		httpStatus = http.StatusUnauthorized
	case v1:
	case code == ocsNotFound:
		httpStatus = http.StatusNotFound
	case code == 996 || code == 999:
		httpStatus = http.StatusInternalServerError
	case code < 200 || code > 600:
		httpStatus = http.StatusBadRequest
	default:
		httpStatus = code
	}
	if data == nil {
		data = []any{} // PHP's empty array
	}
	meta := map[string]any{"status": status, "statuscode": code, "message": message}
	if v1 {
		meta["totalitems"], meta["itemsperpage"] = "", ""
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(httpStatus)
	json.NewEncoder(w).Encode(map[string]any{"ocs": map[string]any{"meta": meta, "data": data}})
}

// serveOCS routes capabilities and shares. Only JSON is spoken.
func (s *Server) serveOCS(w http.ResponseWriter, r *http.Request, area string) {
	rt := ocsRoute(r.URL.Path)
	switch {
	case area == "capabilities" && r.Method == http.MethodGet:
		writeOCS(w, r, 200, "OK", s.capabilities())
	case area == "shares" && rt == "/apps/files_sharing/api/v1/shares" && r.Method == http.MethodPost:
		s.createShare(w, r)
	case area == "shares" && rt == "/apps/files_sharing/api/v1/shares" && r.Method == http.MethodGet:
		s.listShares(w, r)
	case area == "shares" && (r.Method == http.MethodGet || r.Method == http.MethodDelete):
		id := strings.TrimPrefix(rt, "/apps/files_sharing/api/v1/shares/")
		s.oneShare(w, r, id)
	default:
		writeOCS(w, r, ocsNotFound, "Invalid query, please check the syntax. API specifications are here: http://www.freedesktop.org/wiki/Specifications/open-collaboration-services.", nil)
	}
}

func (s *Server) capabilities() map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var major, minor, micro int
	fmt.Sscanf(s.version, "%d.%d.%d", &major, &minor, &micro)
	dav := map[string]any{"bulkupload": "1.0"}
	if s.chunking {
		dav["chunking"] = "1.0"
	}
	expire := map[string]any{"enabled": s.expireEnabled}
	if s.expireEnabled {
		expire["days"], expire["enforced"] = s.expireDays, s.expireEnforced
	}
	return map[string]any{
		"version": map[string]any{"major": major, "minor": minor, "micro": micro, "string": s.version,
			"edition": "", "extendedSupport": false},
		"capabilities": map[string]any{
			"core": map[string]any{"pollinterval": 60, "webdav-root": "remote.php/webdav"},
			"dav":  dav,
			"files": map[string]any{"bigfilechunking": s.chunking, "versioning": true, "version_labeling": true,
				"version_deletion": true, "undelete": true},
			"files_sharing": map[string]any{
				"api_enabled": true,
				"public": map[string]any{
					"enabled":        s.publicLinks,
					"password":       map[string]any{"enforced": s.passwordEnforced, "askForOptionalPassword": false},
					"multiple_links": true, "expire_date": expire,
					"expire_date_internal": map[string]any{"enabled": false},
					"expire_date_remote":   map[string]any{"enabled": false},
					"send_mail":            false, "upload": true, "upload_files_drop": true, "custom_tokens": false,
				},
				"resharing": true, "user": map[string]any{"send_mail": false, "expire_date": map[string]any{"enabled": true}},
				"group_sharing": true, "group": map[string]any{"enabled": true, "expire_date": map[string]any{"enabled": true}},
				"default_permissions": 31, "exclude_reshare_from_edit": false,
				"federation": map[string]any{"outgoing": true, "incoming": true, "expire_date": map[string]any{"enabled": true},
					"expire_date_supported": map[string]any{"enabled": true}},
				"sharee": map[string]any{"query_lookup_default": false, "always_show_unique": true, "minSearchStringLength": 0},
			},
		},
	}
}

// rateLimited records an attempt; when the window is full it answers 429.
func (s *Server) rateLimited(w http.ResponseWriter, r *http.Request) bool {
	s.mu.Lock()
	now := s.now()
	kept := s.shareAttempts[:0]
	for _, t := range s.shareAttempts {
		if now.Sub(t) < s.rateWindow {
			kept = append(kept, t)
		}
	}
	s.shareAttempts = kept
	limited := s.rateLimit > 0 && len(kept) >= s.rateLimit
	if !limited {
		s.shareAttempts = append(s.shareAttempts, now)
	}
	s.mu.Unlock()
	if !limited {
		return false
	}
	// Nextcloud's rate limiter answers 429 with an empty text/html body and
	// no Retry-After, also for format=json; the window is 10 minutes.
	w.Header().Set("Content-Type", "text/html; charset=UTF-8")
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusTooManyRequests)
	return true
}

// param reads a form or JSON body parameter; present tells "" from absent.
func param(r *http.Request, body map[string]any, name string) (value string, present bool) {
	if body != nil {
		v, ok := body[name]
		if !ok || v == nil {
			return "", ok
		}
		switch t := v.(type) {
		case string:
			return t, true
		case float64:
			return strconv.FormatFloat(t, 'f', -1, 64), true
		default:
			return fmt.Sprint(t), true
		}
	}
	if _, ok := r.PostForm[name]; ok {
		return r.PostForm.Get(name), true
	}
	return "", false
}

func (s *Server) createShare(w http.ResponseWriter, r *http.Request) {
	if s.rateLimited(w, r) {
		return
	}
	var body map[string]any
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			writeOCS(w, r, 400, "Invalid JSON body", nil)
			return
		}
	} else if err := r.ParseForm(); err != nil {
		writeOCS(w, r, 400, "Invalid form body", nil)
		return
	}
	p, _ := param(r, body, "path")
	if p == "" {
		writeOCS(w, r, 404, "Please specify a file or folder path", nil)
		return
	}
	p = clean(p)
	fi, err := s.stat(p)
	if err != nil || p == "/" {
		writeOCS(w, r, 404, "Wrong path, file/folder does not exist", nil)
		return
	}
	typStr, _ := param(r, body, "shareType")
	typ, err := strconv.Atoi(typStr)
	if err != nil {
		writeOCS(w, r, 400, "Unknown share type", nil)
		return
	}
	with, _ := param(r, body, "shareWith")
	password, _ := param(r, body, "password")
	note, _ := param(r, body, "note")
	label, _ := param(r, body, "label")
	sh := &share{typ: typ, fileID: s.idOf(p), itemType: "file", shareWith: with, note: note, label: label, stime: s.clock()}
	if fi.IsDir() {
		sh.itemType = "folder"
	}

	s.mu.Lock()
	users, groups, adminOnly := s.users, s.groups, s.adminOnly
	publicLinks, pwdEnforced := s.publicLinks, s.passwordEnforced
	expEnabled, expDays, expEnforced := s.expireEnabled, s.expireDays, s.expireEnforced
	s.mu.Unlock()

	switch typ {
	case 0:
		s.mu.Lock()
		known := users[with] && with != s.opts.User
		s.mu.Unlock()
		if !known {
			writeOCS(w, r, 404, "Please specify a valid account to share with", nil)
			return
		}
		sh.perms = 31
	case 1:
		if adminOnly {
			writeOCS(w, r, ocsUnauthorised, "Unauthorised", nil)
			return
		}
		s.mu.Lock()
		known := groups[with]
		s.mu.Unlock()
		if !known {
			writeOCS(w, r, 404, "Please specify a valid group", nil)
			return
		}
		sh.perms = 31
	case 3:
		if !publicLinks {
			writeOCS(w, r, 404, "Public link sharing is disabled by the administrator", nil)
			return
		}
		if pwdEnforced && password == "" {
			writeOCS(w, r, 403, "Passwords are enforced for link and mail shares", nil)
			return
		}
		sh.perms = 17 // READ + SHARE: outgoing federation is on
		sh.token = token()
		sh.password = password
		sh.shareWith = ""
	default:
		writeOCS(w, r, 400, "Unknown share type", nil)
		return
	}
	if sh.itemType == "file" && typ != 3 {
		sh.perms &^= 4 | 8 // files cannot be shared with create/delete
	}
	if v, ok := param(r, body, "permissions"); ok && v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 31 {
			writeOCS(w, r, 400, "Invalid permissions", nil)
			return
		}
		sh.perms = n
	}

	today := s.clock().UTC().Truncate(24 * time.Hour)
	if v, present := param(r, body, "expireDate"); typ != 3 && present && v != "" {
		// User and group shares take an explicit expiry (no default).
		d, err := time.Parse("2006-01-02", v)
		if err != nil || !d.After(today) {
			writeOCS(w, r, 404, "Invalid date. Format must be YYYY-MM-DD", nil)
			return
		}
		sh.expiration = d
	}
	if typ == 3 {
		v, present := param(r, body, "expireDate")
		switch {
		case present && v == "":
			if expEnforced {
				writeOCS(w, r, 404, "Expiration date is enforced", nil)
				return
			}
		case present:
			d, err := time.Parse("2006-01-02", v)
			if err != nil {
				writeOCS(w, r, 404, "Invalid date. Format must be YYYY-MM-DD", nil)
				return
			}
			if !d.After(today) {
				writeOCS(w, r, 404, "Expiration date is in the past", nil)
				return
			}
			if expEnforced && d.After(today.AddDate(0, 0, expDays)) {
				writeOCS(w, r, 404, fmt.Sprintf("Cannot set expiration date more than %d days in the future", expDays), nil)
				return
			}
			sh.expiration = d
		case expEnabled:
			sh.expiration = today.AddDate(0, 0, expDays)
		}
	}

	s.mu.Lock()
	sh.id = s.nextShareID
	s.nextShareID++
	s.shares = append(s.shares, sh)
	out := s.shareJSONLocked(r, sh, p, fi)
	s.mu.Unlock()
	writeOCS(w, r, 200, "OK", out)
}

func (s *Server) listShares(w http.ResponseWriter, r *http.Request) {
	var onID int64 = -1
	if p := r.URL.Query().Get("path"); p != "" {
		if _, err := s.stat(clean(p)); err != nil {
			writeOCS(w, r, 404, "Wrong path, file/folder does not exist", nil)
			return
		}
		onID = s.idOf(clean(p))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []any{}
	for _, sh := range s.shares {
		if onID >= 0 && sh.fileID != onID {
			continue
		}
		if j := s.shareJSONByID(r, sh); j != nil {
			out = append(out, j)
		}
	}
	writeOCS(w, r, 200, "OK", out)
}

func (s *Server) oneShare(w http.ResponseWriter, r *http.Request, id string) {
	n, _ := strconv.Atoi(id)
	s.mu.Lock()
	idx := -1
	for i, sh := range s.shares {
		if sh.id == n && s.pathOfLocked(sh.fileID) != "" {
			idx = i
		}
	}
	if idx < 0 {
		s.mu.Unlock()
		writeOCS(w, r, 404, "Wrong share ID, share does not exist", nil)
		return
	}
	if r.Method == http.MethodDelete {
		s.shares = append(s.shares[:idx], s.shares[idx+1:]...)
		s.mu.Unlock()
		writeOCS(w, r, 200, "OK", nil)
		return
	}
	out := []any{s.shareJSONByID(r, s.shares[idx])} // GET by id answers an array
	s.mu.Unlock()
	writeOCS(w, r, 200, "OK", out)
}

// shareJSONByID renders a share whose file may have moved; nil when the
// file is gone. Needs s.mu.
func (s *Server) shareJSONByID(r *http.Request, sh *share) map[string]any {
	p := s.pathOfLocked(sh.fileID)
	if p == "" {
		return nil
	}
	fi, err := s.stat(p) // the memory FS has its own lock
	if err != nil {
		return nil
	}
	return s.shareJSONLocked(r, sh, p, fi)
}

// shareJSONLocked renders a share object as the OCS sharing API does.
func (s *Server) shareJSONLocked(r *http.Request, sh *share, p string, fi os.FileInfo) map[string]any {
	var expiration, tok, with, pwd any
	if !sh.expiration.IsZero() {
		expiration = sh.expiration.Format("2006-01-02") + " 23:59:59" // the end of the day, as Nextcloud 34 answers
	}
	withName := sh.shareWith
	if sh.typ == 3 {
		tok = sh.token
		withName = "(Shared link)"
		if sh.password != "" {
			pwd = "$2y$10$fakehash" + sh.token // Nextcloud returns the hash
		}
	} else {
		with = sh.shareWith
	}
	size := fi.Size()
	out := map[string]any{
		"id": strconv.Itoa(sh.id), "share_type": sh.typ, "uid_owner": s.opts.User, "displayname_owner": s.opts.User,
		"permissions": sh.perms, "can_edit": true, "can_delete": true, "stime": sh.stime.Unix(), "parent": nil,
		"expiration": expiration, "token": tok, "uid_file_owner": s.opts.User, "note": sh.note, "label": sh.label,
		"displayname_file_owner": s.opts.User, "path": p, "item_type": sh.itemType, "item_permissions": 27,
		"mimetype": contentType(p, fi.IsDir()), "has_preview": false, "storage_id": "home::" + s.opts.User,
		"storage": 2, "item_source": sh.fileID, "file_source": sh.fileID, "file_parent": s.ids[parentOf(p)],
		"file_target": "/" + baseOf(p), "item_size": size, "item_mtime": fi.ModTime().Unix(),
		"share_with": with, "share_with_displayname": withName, "password": pwd,
		"send_password_by_talk": false, "mail_send": 0, "hide_download": 0, "attributes": nil,
	}
	if sh.typ == 3 {
		out["url"] = s.baseURL(r) + "/s/" + sh.token
	}
	return out
}

func parentOf(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

func baseOf(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }

func (s *Server) baseURL(r *http.Request) string {
	if s.opts.BaseURL != "" {
		return strings.TrimRight(s.opts.BaseURL, "/")
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// shareTypesLocked lists the share types on file id. Needs s.mu.
func (s *Server) shareTypesLocked(id int64) []int {
	seen := map[int]bool{}
	var out []int
	for _, sh := range s.shares {
		if sh.fileID == id && !seen[sh.typ] {
			seen[sh.typ] = true
			out = append(out, sh.typ)
		}
	}
	return out
}

// Shares returns how many shares exist.
func (s *Server) Shares() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.shares)
}

const tokenAlphabet = "abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"

// token makes a 15-character link token like Nextcloud's.
func token() string {
	b := make([]byte, 15)
	rand.Read(b)
	for i := range b {
		b[i] = tokenAlphabet[int(b[i])%len(tokenAlphabet)]
	}
	return string(b)
}
