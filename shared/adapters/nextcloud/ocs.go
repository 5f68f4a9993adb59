package nextcloud

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/retryafter"
	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

// ocsEnvelope is {"ocs":{"meta":{…},"data":…}}.
type ocsEnvelope struct {
	OCS struct {
		Meta struct {
			Status     string  `json:"status"`
			StatusCode flexInt `json:"statuscode"`
			Message    string  `json:"message"`
		} `json:"meta"`
		Data json.RawMessage `json:"data"`
	} `json:"ocs"`
}

// flexInt accepts 17, "17", "" and null: Nextcloud is not consistent.
type flexInt int64

func (f *flexInt) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "" || s == "null" {
		*f = 0
		return nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("not an integer: %s", b)
	}
	*f = flexInt(n)
	return nil
}

// ocs performs an OCS call and decodes data into out (nil = ignore). Both v1
// (ok = 100, failures as HTTP 200) and v2 (ok = 200, HTTP = statuscode) are
// understood.
func (c *Client) ocs(ctx context.Context, op, method, area, route string, query, form url.Values, out any) error {
	q := url.Values{}
	for k, v := range query {
		q[k] = v
	}
	q.Set("format", "json")
	rq := &request{method: method, area: area, path: c.ocsPrefix + route, query: q, ocs: true}
	if form != nil {
		enc := form.Encode()
		rq.body, rq.size = strings.NewReader(enc), int64(len(enc))
		rq.header = http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}
	}
	resp, err := c.send(ctx, op, rq)
	if err != nil {
		return err
	}
	defer discard(resp)
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return classify(op, &httpError{Method: method, Endpoint: rq.endpoint(), OCS: true, Err: err})
	}
	var env ocsEnvelope
	if err := json.Unmarshal(raw, &env); err != nil || env.OCS.Meta.StatusCode == 0 {
		if err == nil {
			err = fmt.Errorf("no OCS envelope")
		}
		return c.badAnswer(op, rq, resp.StatusCode, err)
	}
	if sc := int(env.OCS.Meta.StatusCode); sc != 100 && sc != 200 {
		return classify(op, &httpError{Method: method, Endpoint: rq.endpoint(), OCS: true, Status: resp.StatusCode,
			OCSStatus: sc, Message: env.OCS.Meta.Message,
			RetryAfter: retryafter.Parse(resp.Header.Get("Retry-After"), time.Now())})
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(env.OCS.Data, out); err != nil {
		return c.badAnswer(op, rq, resp.StatusCode, err)
	}
	return nil
}

type wireCaps struct {
	Version struct {
		Major   flexInt `json:"major"`
		String  string  `json:"string"`
		Edition string  `json:"edition"`
	} `json:"version"`
	Capabilities map[string]json.RawMessage `json:"capabilities"`
}

type wireExpire struct {
	Enabled  bool    `json:"enabled"`
	Days     flexInt `json:"days"`
	Enforced bool    `json:"enforced"`
}

type wireSharing struct {
	APIEnabled bool `json:"api_enabled"`
	Public     struct {
		Enabled  bool `json:"enabled"`
		Password struct {
			Enforced               bool `json:"enforced"`
			AskForOptionalPassword bool `json:"askForOptionalPassword"`
		} `json:"password"`
		ExpireDate    wireExpire `json:"expire_date"`
		MultipleLinks bool       `json:"multiple_links"`
		Upload        bool       `json:"upload"`
	} `json:"public"`
	Resharing          bool    `json:"resharing"`
	GroupSharing       bool    `json:"group_sharing"`
	DefaultPermissions flexInt `json:"default_permissions"`
	Federation         struct {
		Outgoing bool `json:"outgoing"`
	} `json:"federation"`
	ShareByMail struct {
		Enabled bool `json:"enabled"`
	} `json:"sharebymail"`
}

type wireFiles struct {
	BigFileChunking bool `json:"bigfilechunking"`
	Versioning      bool `json:"versioning"`
	Undelete        bool `json:"undelete"`
}

type wireDAV struct {
	Chunking string `json:"chunking"`
}

// Capabilities asks the server what it offers. One call.
func (c *Client) Capabilities(ctx context.Context) (*switchboard.FilesCapabilities, error) {
	const op = "nextcloud.capabilities"
	var raw json.RawMessage
	if err := c.ocs(ctx, op, http.MethodGet, "capabilities", "/cloud/capabilities", nil, nil, &raw); err != nil {
		return nil, err
	}
	caps, err := toCapabilities(raw)
	if err != nil {
		return nil, c.badAnswer(op, &request{method: http.MethodGet, path: c.ocsPrefix + "/cloud/capabilities", ocs: true}, http.StatusOK, err)
	}
	c.mu.Lock()
	c.caps = caps
	c.mu.Unlock()
	return caps, nil
}

func toCapabilities(raw json.RawMessage) (*switchboard.FilesCapabilities, error) {
	var w wireCaps
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, err
	}
	out := &switchboard.FilesCapabilities{Version: w.Version.String, Major: int(w.Version.Major), Edition: w.Version.Edition, Raw: raw}
	for name := range w.Capabilities {
		out.Apps = append(out.Apps, name)
	}
	sort.Strings(out.Apps)
	// Blocks are decoded leniently: one odd block must not hide the others.
	if b, ok := w.Capabilities["dav"]; ok {
		var d wireDAV
		_ = json.Unmarshal(b, &d)
		out.Chunking = d.Chunking
	}
	if b, ok := w.Capabilities["files"]; ok {
		var f wireFiles
		_ = json.Unmarshal(b, &f)
		out.BigFileChunking, out.Versioning, out.Undelete = f.BigFileChunking, f.Versioning, f.Undelete
	}
	if b, ok := w.Capabilities["files_sharing"]; ok {
		var s wireSharing
		_ = json.Unmarshal(b, &s)
		out.Sharing = switchboard.SharingCapabilities{
			Present:            true,
			APIEnabled:         s.APIEnabled,
			PublicEnabled:      s.Public.Enabled,
			PasswordEnforced:   s.Public.Password.Enforced,
			AskOptionalPwd:     s.Public.Password.AskForOptionalPassword,
			ExpireDateEnabled:  s.Public.ExpireDate.Enabled,
			ExpireDateDays:     int(s.Public.ExpireDate.Days),
			ExpireDateEnforced: s.Public.ExpireDate.Enforced,
			MultipleLinks:      s.Public.MultipleLinks,
			PublicUpload:       s.Public.Upload,
			Resharing:          s.Resharing,
			GroupSharing:       s.GroupSharing,
			DefaultPermissions: int(s.DefaultPermissions),
			FederationOutgoing: s.Federation.Outgoing,
			Email:              s.ShareByMail.Enabled,
		}
	}
	return out, nil
}

type wireShare struct {
	ID                   flexInt `json:"id"`
	ShareType            flexInt `json:"share_type"`
	UIDOwner             string  `json:"uid_owner"`
	Permissions          flexInt `json:"permissions"`
	STime                flexInt `json:"stime"`
	Expiration           *string `json:"expiration"`
	Token                *string `json:"token"`
	Path                 string  `json:"path"`
	ItemType             string  `json:"item_type"`
	FileSource           flexInt `json:"file_source"`
	ShareWith            *string `json:"share_with"`
	ShareWithDisplayname *string `json:"share_with_displayname"`
	Password             *string `json:"password"`
	URL                  string  `json:"url"`
	Note                 string  `json:"note"`
	Label                string  `json:"label"`
}

func toShare(w wireShare) switchboard.Share {
	s := switchboard.Share{
		ID:          strconv.FormatInt(int64(w.ID), 10),
		Type:        switchboard.ShareType(w.ShareType),
		Path:        w.Path,
		ItemType:    w.ItemType,
		FileID:      int64(w.FileSource),
		Permissions: int(w.Permissions),
		URL:         w.URL,
		HasPassword: w.Password != nil && *w.Password != "",
		Note:        w.Note,
		Label:       w.Label,
		Owner:       w.UIDOwner,
	}
	if w.Token != nil {
		s.Token = *w.Token
	}
	if w.ShareWith != nil && s.Type != switchboard.ShareLink {
		s.ShareWith = *w.ShareWith // older servers put the password hash here for links
	}
	if w.ShareWithDisplayname != nil {
		s.ShareWithDisplayName = *w.ShareWithDisplayname
	}
	if w.Expiration != nil && *w.Expiration != "" {
		if t, err := time.Parse("2006-01-02 15:04:05", *w.Expiration); err == nil {
			s.Expiration = t.UTC()
		}
	}
	if w.STime > 0 {
		s.Created = time.Unix(int64(w.STime), 0).UTC()
	}
	return s
}

const sharesRoute = "/apps/files_sharing/api/v1/shares"

// CreateShare shares a file or folder. Returns EFORBIDDEN when public links
// are disabled, a password is enforced but missing ("the server requires a
// password for public links") or group shares need admin rights (OCS 997);
// ERATELIMITED after too many creations (Nextcloud allows 20 per user in
// 10 minutes and sends no Retry-After; RetryAfter is set only when a proxy
// or another server sends one); ENOTFOUND for a
// missing path or unknown recipient; EINVALID for an expiry the server refuses.
// Note and Label are scrubbed before they leave (see WithScrubber).
func (c *Client) CreateShare(ctx context.Context, sr switchboard.ShareRequest) (switchboard.Share, error) {
	op := opCreateShare
	cp, err := cleanPath(sr.Path)
	if err != nil {
		return switchboard.Share{}, invalidPath(op, err)
	}
	form := url.Values{"path": {cp}, "shareType": {strconv.Itoa(int(sr.Type))}}
	if sr.ShareWith != "" {
		form.Set("shareWith", sr.ShareWith)
	}
	if sr.Permissions != 0 {
		form.Set("permissions", strconv.Itoa(sr.Permissions))
	}
	if sr.Password != "" {
		form.Set("password", sr.Password)
	}
	switch {
	case sr.NoExpiry:
		form.Set("expireDate", "")
	case !sr.ExpireDate.IsZero():
		form.Set("expireDate", sr.ExpireDate.UTC().Format("2006-01-02"))
	}
	// The note goes to the recipient by mail and the label shows in the
	// share list: text for people, scrubbed like every message.
	if sr.Note != "" {
		form.Set("note", c.scrubber.StringContext(ctx, sr.Note))
	}
	if sr.Label != "" {
		form.Set("label", c.scrubber.StringContext(ctx, sr.Label))
	}
	var w wireShare
	if err := c.ocs(ctx, op, http.MethodPost, "shares", sharesRoute, nil, form, &w); err != nil {
		return switchboard.Share{}, err
	}
	return toShare(w), nil
}

// ListShares lists the shares this account created, on path only when path
// is not empty. Returns ENOTFOUND when path does not exist.
func (c *Client) ListShares(ctx context.Context, path string) ([]switchboard.Share, error) {
	op := "nextcloud.shares " + path
	q := url.Values{}
	if path != "" {
		cp, err := cleanPath(path)
		if err != nil {
			return nil, invalidPath(op, err)
		}
		q.Set("path", cp)
	}
	var ws []wireShare
	if err := c.ocs(ctx, op, http.MethodGet, "shares", sharesRoute, q, nil, &ws); err != nil {
		return nil, err
	}
	out := make([]switchboard.Share, 0, len(ws))
	for _, w := range ws {
		out = append(out, toShare(w))
	}
	return out, nil
}

// DeleteShare revokes a share by id. Returns ENOTFOUND for an unknown id.
func (c *Client) DeleteShare(ctx context.Context, id string) error {
	op := "nextcloud.unshare " + id
	if id == "" || strings.ContainsAny(id, "/?#") {
		return switchboard.E(op, switchboard.EINVALID, "share id must be the id from the share list")
	}
	return c.ocs(ctx, op, http.MethodDelete, "shares", sharesRoute+"/"+url.PathEscape(id), nil, nil, nil)
}
