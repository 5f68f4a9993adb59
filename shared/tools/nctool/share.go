package nctool

import (
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"
	"path"
	"strconv"
	"strings"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// Share bounds.
const (
	MaxExpireDays = 3650
	// GeneratedPasswordLen is long enough for any password_policy setting
	// (Nextcloud's default minimum is 10, hardened setups ask for 12–16).
	GeneratedPasswordLen = 24
)

// shareDone is what a share did.
type shareDone struct {
	sh        sb.Share
	p, file   string // the shared path; file: a file inside a shared folder the download link points at
	with      string
	typ       sb.ShareType
	password  bool   // the link has a password
	generated string // the password the tool made, shown once
	notes     []string
}

// share creates a user, group or public link share.
func (c *invocation) share() sb.Envelope {
	done, err := c.doShare()
	switch {
	case err != nil:
		return c.envelope(err)
	case c.preflight:
		return checked
	}
	return sb.OK(c.shareAnswer(done))
}

// doShare is share's work; in a preflight it stops after the checks.
func (c *invocation) doShare() (shareDone, error) {
	var a shareArgs
	if err := c.decodeArgs(&a); err != nil {
		return shareDone{}, err
	}
	p, err := c.remote("path", a.Path)
	if err != nil {
		return shareDone{}, err
	}
	typ := sb.ShareUser
	if a.ShareType != nil {
		typ = sb.ShareType(*a.ShareType)
	}
	with := c.optional(a.ShareWith)
	with = strings.TrimSpace(with)
	password := c.optional(a.Password)
	generate := boolOr(a.GeneratePassword, false)
	note := c.optional(a.Note)
	file := c.optional(a.File)
	perms := sb.PermRead
	if a.Permissions != nil {
		switch *a.Permissions {
		case "read":
		case "edit":
			// Nextcloud drops create and delete for single files itself.
			perms = sb.PermRead | sb.PermUpdate | sb.PermCreate | sb.PermDelete
		default:
			return shareDone{}, c.refuse(sb.EINVALID, "permissions must be \"read\" (the default) or \"edit\", not %s", quote(*a.Permissions))
		}
	}

	switch typ {
	case sb.ShareUser, sb.ShareGroup:
		if with == "" {
			return shareDone{}, c.refuse(sb.EINVALID, "shareWith is missing: name the Nextcloud %s to share with, or use shareType 3 for a public link", map[sb.ShareType]string{0: "user", 1: "group"}[typ])
		}
		if password != "" || generate {
			return shareDone{}, c.refuse(sb.EINVALID, "passwords are for public links (shareType 3) only; a user or group share needs none")
		}
	case sb.ShareLink:
		if with != "" {
			return shareDone{}, c.refuse(sb.EINVALID, "a public link (shareType 3) has no shareWith; leave it out, or use shareType 0 to share with a user")
		}
		if !c.agent.AllowPublicShares {
			return shareDone{}, c.refuse(sb.EFORBIDDEN, "public links are not allowed for this agent (allowPublicShares is false); share with a Nextcloud user instead (shareType 0, shareWith), or ask the operator")
		}
		if password != "" && generate {
			return shareDone{}, c.refuse(sb.EINVALID, "give either password or generatePassword: true, not both")
		}
	default:
		return shareDone{}, c.refuse(sb.EINVALID, "shareType must be 0 (a user, the default), 1 (a group) or 3 (a public link), not %d", typ)
	}
	if file != "" {
		if file != path.Base(file) || strings.ContainsAny(file, "/\\") || file == "." || file == ".." {
			return shareDone{}, c.refuse(sb.EINVALID, "file must be the bare name of a file directly inside the shared folder, such as report.pdf")
		}
		if _, err := c.scope.resolve("file", path.Join(c.scope.show(p), file)); err != nil {
			return shareDone{}, err
		}
		if c.preflight {
			return shareDone{}, nil
		}
		e, err := c.nc.Stat(c.ctx, path.Join(p, file))
		if err != nil {
			return shareDone{}, c.failure(fmt.Sprintf("cannot point the download link at %s inside %s", quote(file), c.scope.show(p)), err)
		}
		if e.IsDir {
			return shareDone{}, c.refuse(sb.EINVALID, "%s inside %s is a folder; file must name a file (or leave it out to download the whole folder as a zip)", quote(file), c.scope.show(p))
		}
	}

	if c.preflight {
		return shareDone{}, nil
	}
	req := sb.ShareRequest{Path: p, Type: typ, ShareWith: with, Permissions: perms, Password: password, Note: note}
	var notes []string
	var generated string
	today := c.t.now().UTC().Truncate(24 * time.Hour)
	if typ == sb.ShareLink {
		caps, err := c.nc.Capabilities(c.ctx)
		if err != nil {
			return shareDone{}, c.failure("cannot read the server's sharing settings", err)
		}
		s := caps.Sharing
		if !s.APIEnabled || !s.PublicEnabled {
			return shareDone{}, c.refuse(sb.EFORBIDDEN, "public links are disabled on this Nextcloud; share with a user instead (shareType 0, shareWith)")
		}
		days := c.agent.shareDefaultDays()
		if a.ExpireDays != nil {
			days = *a.ExpireDays
		}
		if s.ExpireDateEnforced && s.ExpireDateDays > 0 && (days == 0 || days > s.ExpireDateDays) {
			notes = append(notes, fmt.Sprintf("the server allows links for at most %d days, so the expiry was set to %d days instead of %s",
				s.ExpireDateDays, s.ExpireDateDays, daysText(days)))
			days = s.ExpireDateDays
		}
		if days == 0 {
			req.NoExpiry = true
		} else {
			req.ExpireDate = today.AddDate(0, 0, days)
		}
		if (s.PasswordEnforced && password == "") || generate {
			if generated, err = newPassword(); err != nil {
				return shareDone{}, c.failure("cannot create the link", sb.Wrap(c.op, sb.EINTERNAL, "could not generate a password", err))
			}
			req.Password = generated
			if !generate {
				notes = append(notes, "the server requires a password on links, so one was generated")
			}
		}
		if c.agent.AgentName != "" {
			req.Label = c.agent.AgentName
		}
	} else if a.ExpireDays != nil && *a.ExpireDays > 0 {
		// User and group shares expire only when the call asks: the default
		// expiry is for links, which anyone holding them can open. A person's
		// share is tied to their account and revocable, and one that vanished
		// after 14 days would take a delivered report away from them
		// (Nextcloud, too, keeps the two defaults apart and leaves the one for
		// internal shares off).
		req.ExpireDate = today.AddDate(0, 0, *a.ExpireDays)
	}

	if file == "" {
		// Every POST counts against Nextcloud's limit of 20 share creations
		// per 10 minutes, failed ones too (measured on Nextcloud 34): one
		// PROPFIND first, after the cheaper refusals above, keeps a missing
		// path from spending one. With file, its Stat proved the folder.
		if err := c.shareable(p); err != nil {
			return shareDone{}, err
		}
	}
	sh, err := c.nc.CreateShare(c.ctx, req)
	if err != nil {
		// A 429 is reported, never retried here: another attempt would
		// count against the same limit (20 per 10 minutes).
		if status(err) == 429 {
			err = c.shareLimited(err)
		}
		return shareDone{}, c.failure("cannot share "+c.scope.show(p), err)
	}
	return shareDone{sh: sh, p: p, file: file, with: with, typ: typ, password: req.Password != "", generated: generated, notes: notes}, nil
}

// shareAnswer is share's answer to the model.
func (c *invocation) shareAnswer(d shareDone) map[string]any {
	sh, p, file, typ, with, generated, notes := d.sh, d.p, d.file, d.typ, d.with, d.generated, d.notes
	data := c.shareData(sh, p)
	if typ == sb.ShareLink {
		data["download_url"] = sh.DownloadURL(file)
	}
	if generated != "" {
		data["password"] = generated
		notes = append(notes, "the password is shown only this once: pass it to the recipient separately from the link")
	}
	msg := fmt.Sprintf("shared %s", c.scope.show(p))
	switch typ {
	case sb.ShareLink:
		msg += " as a public link (anyone holding it can open it"
		if d.password {
			msg += " with the password"
		}
		msg += ")"
	default:
		msg += " with " + shareTypeName(typ) + " " + with
	}
	if len(notes) > 0 {
		msg += "; " + strings.Join(notes, "; ")
	}
	data["message"] = msg + ". To revoke: " + data["revoke"].(string)
	if len(notes) > 0 {
		data["notices"] = notes
	}
	return data
}

// shared is the typed form of a share.
func (c *invocation) shared(sh sb.Share, fallback string) sb.FileShared {
	p := fallback
	if sh.Path != "" {
		p = path.Clean("/" + sh.Path)
	}
	out := sb.FileShared{ID: sh.ID, Type: sh.Type, Path: c.scope.show(p)}
	if sh.Type == sb.ShareLink {
		out.URL = sh.URL
	} else {
		out.ShareWith, out.InternalURL = sh.ShareWith, c.internalLink(sh.FileID)
	}
	return out
}

// shareable stats p before a share is created: a missing path, or one the
// account may not share (no R among its permissions), ends here instead of
// in a POST that cannot succeed.
func (c *invocation) shareable(p string) error {
	e, err := c.nc.Stat(c.ctx, p)
	switch {
	case sb.ErrorCode(err) == sb.ENOTFOUND:
		return c.failure("cannot share "+c.scope.show(p), sb.Wrap(c.op, sb.ENOTFOUND,
			"it does not exist, so nothing was shared (and none of Nextcloud's 20 share creations per 10 minutes was spent); list its folder to check the name, or upload the file first", err))
	case err != nil:
		return c.failure("cannot share "+c.scope.show(p), err)
	case e.Permissions != "" && !strings.Contains(e.Permissions, "R"):
		return c.refuse(sb.EFORBIDDEN, "cannot share %s: the account may not share it (it was shared with the account without the right to share it on); ask its owner to share it", c.scope.show(p))
	}
	return nil
}

// ShareLimitWindow is Nextcloud's window for share creations: 20 per user
// in 10 minutes, failed creations included.
const ShareLimitWindow = 10 * time.Minute

// shareLimited says what a 429 on share creation means. Nextcloud 34
// answers it with an empty body and no Retry-After, so without one the
// longest wait is the window itself.
func (c *invocation) shareLimited(err error) error {
	var se *sb.Error
	wait := time.Duration(0)
	if errors.As(err, &se) {
		wait = se.RetryAfter
	}
	const limit = "Nextcloud allows 20 share creations per 10 minutes for this account (failed attempts count too), and they are used up"
	if wait > 0 { // a server (or proxy) that says how long
		e := sb.Wrap(c.op, sb.ERATELIMITED, fmt.Sprintf("%s; wait %s (until %s) before trying again — report the wait instead of retrying now",
			limit, wait.Round(time.Second), minuteAfter(c.t.now().Add(wait))), err)
		e.RetryAfter = wait
		return e
	}
	return sb.Wrap(c.op, sb.ERATELIMITED, fmt.Sprintf("%s; Nextcloud does not say how long, so wait up to 10 minutes (until %s at the latest) before trying again — report the wait instead of retrying now",
		limit, minuteAfter(c.t.now().Add(ShareLimitWindow))), err)
}

// minuteAfter is t rounded up to the minute, "15:04 UTC": a time to wait
// for must not be shown before it.
func minuteAfter(t time.Time) string {
	return t.UTC().Add(time.Minute - time.Nanosecond).Truncate(time.Minute).Format("15:04 UTC")
}

// shareData is the lifecycle of a share: what it is, where it leads, when
// it ends, how to end it.
func (c *invocation) shareData(sh sb.Share, fallback string) map[string]any {
	p := fallback
	if sh.Path != "" {
		p = path.Clean("/" + sh.Path)
	}
	d := map[string]any{
		"share_id":            sh.ID,
		"share_type":          shareTypeName(sh.Type),
		"path":                c.scope.show(p),
		"permissions":         sh.Permissions,
		"permissions_meaning": permissionWords(sh.Permissions),
		"has_password":        sh.HasPassword,
		"expires":             nil,
		"revoke":              fmt.Sprintf(`Nextcloud.unshare with share_id %s: {"shareId": "%s"}`, sh.ID, sh.ID),
	}
	if !sh.Expiration.IsZero() {
		d["expires"] = sh.Expiration.Format("2006-01-02")
	}
	if sh.Type == sb.ShareLink {
		d["url"] = sh.URL
		d["token"] = sh.Token
	} else {
		d["share_with"] = sh.ShareWith
		if link := c.internalLink(sh.FileID); link != "" {
			d["internal_url"] = link
		}
	}
	return d
}

func daysText(days int) string {
	if days == 0 {
		return "none"
	}
	return strconv.Itoa(days)
}

// Password alphabet: no look-alikes (0/O, 1/l/I), symbols that survive
// chat, e-mail and URLs.
const (
	pwLower   = "abcdefghijkmnpqrstuvwxyz"
	pwUpper   = "ABCDEFGHJKLMNPQRSTUVWXYZ"
	pwDigits  = "23456789"
	pwSymbols = "-_.+!=#"
)

// newPassword makes a link password from crypto/rand with every class
// (lower, upper, digit, symbol) present, so any password policy passes.
func newPassword() (string, error) {
	classes := []string{pwLower, pwUpper, pwDigits, pwSymbols}
	all := strings.Join(classes, "")
	pick := func(set string) (byte, error) {
		n, err := rand.Int(rand.Reader, big.NewInt(int64(len(set))))
		if err != nil {
			return 0, err
		}
		return set[n.Int64()], nil
	}
	b := make([]byte, GeneratedPasswordLen)
	for i := range b {
		set := all
		if i < len(classes) {
			set = classes[i]
		}
		ch, err := pick(set)
		if err != nil {
			return "", err
		}
		b[i] = ch
	}
	// Shuffle so the classes are not always in front (Fisher–Yates).
	for i := len(b) - 1; i > 0; i-- {
		j, err := rand.Int(rand.Reader, big.NewInt(int64(i+1)))
		if err != nil {
			return "", err
		}
		b[i], b[j.Int64()] = b[j.Int64()], b[i]
	}
	return string(b), nil
}

// shares lists the agent's shares (all of them, or those of one path) with
// their lifecycle: who or what link, until when, how to revoke. One call.
func (c *invocation) shares() sb.Envelope {
	list, err := c.doShares()
	switch {
	case err != nil:
		return c.envelope(err)
	case c.preflight:
		return checked
	}
	out := make([]map[string]any, 0, len(list))
	for _, sh := range list {
		d := c.shareData(sh, path.Clean("/"+sh.Path))
		if sh.Type == sb.ShareLink {
			d["download_url"] = sh.DownloadURL("")
		}
		out = append(out, d)
	}
	msg := fmt.Sprintf("%d share(s); each names how to revoke it", len(out))
	if len(out) == 0 {
		msg = "no shares"
	}
	return sb.OK(map[string]any{"count": len(out), "shares": out, "message": msg})
}

// doShares is the agent's shares (of the path argument, when given):
// another agent's shares on the same account are left out.
func (c *invocation) doShares() ([]sb.Share, error) {
	var a sharesArgs
	if err := c.decodeArgs(&a); err != nil {
		return nil, err
	}
	on := ""
	if a.Path != nil {
		p, err := c.scope.resolve("path", *a.Path)
		if err != nil {
			return nil, err
		}
		on = p
	}
	if c.preflight {
		return nil, nil
	}
	list, err := c.nc.ListShares(c.ctx, on)
	if err != nil {
		what := "cannot list your shares"
		if on != "" {
			what = "cannot list the shares of " + c.scope.show(on)
		}
		return nil, c.failure(what, err)
	}
	var own []sb.Share
	for _, sh := range list {
		if c.scope.contains(path.Clean("/" + sh.Path)) {
			own = append(own, sh)
		}
	}
	return own, nil
}

// unshare revokes a share by id or token, or every share of a path (which
// needs confirm: true). Only shares of paths inside the root are touched.
func (c *invocation) unshare() sb.Envelope {
	var a unshareArgs
	if err := c.decodeArgs(&a); err != nil {
		return c.bad(err)
	}
	given := 0
	for _, v := range []*string{a.ShareID, a.Token, a.Path} {
		if v != nil {
			given++
		}
	}
	if given != 1 {
		return c.failMsg(sb.EINVALID, "give exactly one of shareId, token or path (path revokes every share of that file or folder)")
	}
	if a.Path != nil {
		return c.unsharePath(a.Path, boolOr(a.Confirm, false))
	}
	var id, token string
	var err error
	if a.ShareID != nil {
		id, err = c.text("shareId", a.ShareID)
		id = strings.TrimSpace(id)
	} else {
		token, err = c.text("token", a.Token)
		token = strings.TrimSpace(token)
	}
	if err != nil {
		return c.bad(err)
	}
	what := "shareId " + quote(id)
	if token != "" {
		what = "token " + quote(token)
	}
	if c.preflight {
		return checked
	}
	shares, err := c.nc.ListShares(c.ctx, "")
	if err != nil {
		return c.fail("cannot revoke the share with "+what, err)
	}
	for _, sh := range shares {
		if (id != "" && sh.ID == id) || (token != "" && sh.Token == token) {
			if !c.scope.contains(path.Clean("/" + sh.Path)) {
				break // another agent's share: as if it did not exist
			}
			if err := c.nc.DeleteShare(c.ctx, sh.ID); err != nil {
				return c.fail("cannot revoke the share with "+what, err)
			}
			d := c.shareData(sh, "")
			delete(d, "revoke")
			d["revoked"] = true
			d["message"] = "revoked share " + sh.ID + " of " + c.scope.show(path.Clean("/"+sh.Path)) + revokeNote(sh)
			return sb.OK(d)
		}
	}
	return c.failMsg(sb.ENOTFOUND, "none of your shares has the %s; Nextcloud.unshare {path, …} or Nextcloud.stat (share_types) help find it", what)
}

func revokeNote(sh sb.Share) string {
	if sh.Type == sb.ShareLink {
		return "; the link stops working now, but anyone who downloaded the file keeps their copy"
	}
	return ""
}

func (c *invocation) unsharePath(arg *string, confirm bool) sb.Envelope {
	p, err := c.scope.resolve("path", *arg)
	if err != nil {
		return c.bad(err)
	}
	if c.preflight {
		return checked
	}
	shares, err := c.nc.ListShares(c.ctx, p)
	if err != nil {
		return c.fail("cannot list the shares of "+c.scope.show(p), err)
	}
	list := make([]map[string]any, 0, len(shares))
	for _, sh := range shares {
		d := c.shareData(sh, p)
		delete(d, "revoke")
		list = append(list, d)
	}
	if len(shares) == 0 {
		return sb.OK(map[string]any{"path": c.scope.show(p), "revoked": 0, "message": c.scope.show(p) + " has no shares"})
	}
	if !confirm {
		return sb.Envelope{Status: "ok", NeedsConfirmation: true, Data: map[string]any{
			"path": c.scope.show(p), "count": len(shares), "shares": list,
			"message": fmt.Sprintf("this would revoke all %d share(s) of %s, listed in shares; nothing was revoked. "+
				"Call Nextcloud.unshare {path, confirm: true} to revoke them all, or {shareId} for one", len(shares), c.scope.show(p)),
		}}
	}
	var revoked, failed []string
	var firstErr error
	for _, sh := range shares {
		if err := c.nc.DeleteShare(c.ctx, sh.ID); err != nil {
			failed = append(failed, sh.ID)
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		revoked = append(revoked, sh.ID)
	}
	if firstErr != nil {
		env := c.fail(fmt.Sprintf("revoked %d of %d share(s) of %s; share(s) %s failed", len(revoked), len(shares), c.scope.show(p), strings.Join(failed, ", ")), firstErr)
		env.Data["revoked_ids"], env.Data["failed_ids"] = revoked, failed
		return env
	}
	return sb.OK(map[string]any{"path": c.scope.show(p), "revoked": len(revoked), "revoked_ids": revoked, "shares": list,
		"message": fmt.Sprintf("revoked all %d share(s) of %s; links stop working now, copies already downloaded stay with their holders", len(revoked), c.scope.show(p))})
}
