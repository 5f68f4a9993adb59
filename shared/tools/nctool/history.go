package nctool

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// file stats p and insists on a file: versions are kept per file id.
func (c *invocation) file(p, verb string) (sb.FileInfo, *sb.Envelope) {
	e, err := c.nc.Stat(c.ctx, p)
	if err != nil {
		env := c.fail(verb+" "+c.scope.show(p), err)
		return e, &env
	}
	if e.IsDir {
		env := c.failMsg(sb.EINVALID, "%s is a folder; versions are kept for files, so name a file inside it", c.scope.show(p))
		return e, &env
	}
	return e, nil
}

// versions lists the versions of a file, newest first. Nextcloud 34 lists
// the current content as one of them (named after its mtime, a GET of it
// answers 404); older servers list only earlier contents. The entry that
// is the current content is marked, found by comparing with the PROPFIND
// of the file that versions needs anyway (for the file id).
func (c *invocation) versions() sb.Envelope {
	p, err := c.pathArg()
	if err != nil {
		return c.bad(err)
	}
	if c.preflight {
		return checked
	}
	e, fail := c.file(p, "cannot list the versions of")
	if fail != nil {
		return *fail
	}
	vs, err := c.nc.Versions(c.ctx, e.FileID)
	if err != nil {
		return c.fail("cannot list the versions of "+c.scope.show(p), err)
	}
	sortNewestFirst(vs)
	cur := currentVersion(vs, e)
	lines := make([]string, 0, len(vs))
	for i, v := range vs {
		var b strings.Builder
		fmt.Fprintf(&b, "versionId %s modified %s %s", strconv.Quote(v.ID), utcMinute(v.Modified), humanBytes(v.Size))
		if v.Author != "" {
			fmt.Fprintf(&b, " by %s", strconv.Quote(v.Author))
		}
		if v.Label != "" {
			fmt.Fprintf(&b, " label %s", strconv.Quote(v.Label))
		}
		if i == cur {
			b.WriteString(" (current content)")
		}
		lines = append(lines, b.String())
	}
	earlier := len(vs)
	if cur >= 0 {
		earlier--
	}
	data := map[string]any{"path": c.scope.show(p), "fileid": e.FileID, "count": len(vs), "earlier": earlier,
		"listing": frame("versions "+c.scope.show(p), lines)}
	const restore = "Nextcloud.restore_version {path, versionId} makes an earlier one the current content again; the content it replaces is kept as a version"
	if cur >= 0 {
		data["current_version_id"] = vs[cur].ID
	}
	switch {
	case earlier == 0 && cur >= 0:
		data["message"] = "1 version, the current content: no earlier versions (the file was never overwritten, or the server keeps none — capabilities: files.versioning)"
	case earlier == 0:
		data["message"] = "no earlier versions: the file was never overwritten, or the server keeps none (capabilities: files.versioning)"
	case cur == 0:
		data["message"] = fmt.Sprintf("%d versions (the newest is the current content); %s", len(vs), restore)
	case cur > 0: // after a restore the current content carries the restored version's time
		data["message"] = fmt.Sprintf("%d versions (versionId %s, modified %s, is the current content); %s", len(vs), strconv.Quote(vs[cur].ID), utcMinute(vs[cur].Modified), restore)
	default:
		data["message"] = fmt.Sprintf("%d earlier version(s); the current content is not among them. %s", len(vs), restore)
	}
	return sb.OK(data)
}

// sortNewestFirst orders versions by time, then by name (a number: the
// mtime in unix seconds); Nextcloud 34 sends them oldest first.
func sortNewestFirst(vs []sb.FileVersion) {
	sort.SliceStable(vs, func(i, j int) bool {
		if !vs[i].Modified.Equal(vs[j].Modified) {
			return vs[i].Modified.After(vs[j].Modified)
		}
		a, _ := strconv.ParseInt(vs[i].ID, 10, 64)
		b, _ := strconv.ParseInt(vs[j].ID, 10, 64)
		return a > b
	})
}

// currentVersion is the index of the entry that is file e's current
// content, or -1 when the server does not list it. An entry with the
// file's ETag is it; else the entry with the file's mtime (whole seconds,
// what versions are named after) and size — on Nextcloud 34 there is one,
// since a second write within the same second replaces that second's
// version; should there be several, the one with the highest name is the
// later write. Not the newest entry: after a restore the current content
// has the restored version's mtime.
func currentVersion(vs []sb.FileVersion, e sb.FileInfo) int {
	for i, v := range vs {
		if v.ETag != "" && v.ETag == e.ETag {
			return i
		}
	}
	if e.Modified.IsZero() {
		return -1
	}
	best, bestID := -1, int64(-1)
	for i, v := range vs {
		if v.Modified.Unix() != e.Modified.Unix() || (e.Size >= 0 && v.Size != e.Size) {
			continue
		}
		if id, _ := strconv.ParseInt(v.ID, 10, 64); id > bestID {
			best, bestID = i, id
		}
	}
	return best
}

// restoreVersion makes an earlier version the current content. It lists
// the versions first (one PROPFIND) to refuse the entry that is the current
// content (Nextcloud answers 201 to restoring it and changes nothing) and a
// versionId that is not there.
func (c *invocation) restoreVersion() sb.Envelope {
	var a restoreVersionArgs
	if err := c.decodeArgs(&a); err != nil {
		return c.bad(err)
	}
	p, err := c.remote("path", a.Path)
	if err != nil {
		return c.bad(err)
	}
	id, err := c.text("versionId", a.VersionID)
	if err != nil {
		return c.bad(err)
	}
	id = strings.TrimSpace(id)
	if _, err := strconv.ParseUint(id, 10, 64); err != nil {
		return c.failMsg(sb.EINVALID, "versionId %s is not a version id; Nextcloud.versions lists them (numbers such as 1714564000)", quote(id))
	}
	if c.preflight {
		return checked
	}
	e, fail := c.file(p, "cannot restore a version of")
	if fail != nil {
		return *fail
	}
	what := fmt.Sprintf("cannot restore version %s of %s", id, c.scope.show(p))
	vs, err := c.nc.Versions(c.ctx, e.FileID)
	if err != nil {
		return c.fail(what, err)
	}
	sortNewestFirst(vs)
	found := -1
	for i, v := range vs {
		if v.ID == id {
			found = i
		}
	}
	switch {
	case found < 0:
		return c.fail(what, sb.E(c.op, sb.ENOTFOUND, fmt.Sprintf("%s has no version %s; Nextcloud.versions {path} lists the versionIds", c.scope.show(p), quote(id))))
	case found == currentVersion(vs, e):
		return c.fail(what, sb.E(c.op, sb.EINVALID, fmt.Sprintf(
			"version %s is the current content of %s, so restoring it would change nothing; pick an earlier versionId from Nextcloud.versions (those not marked current content)", quote(id), c.scope.show(p))))
	}
	if err := c.nc.RestoreVersion(c.ctx, e.FileID, id); err != nil {
		return c.fail(what, err)
	}
	return sb.OK(map[string]any{"path": c.scope.show(p), "versionId": id,
		"message": fmt.Sprintf("restored version %s of %s; the content it replaced is kept as a version", id, c.scope.show(p))})
}

// trash lists, restores or empties the trash bin — only the agent's part
// of it: the bin belongs to the account, which other agents may share.
func (c *invocation) trash() sb.Envelope {
	var a trashArgs
	if err := c.decodeArgs(&a); err != nil {
		return c.bad(err)
	}
	op, err := c.text("op", a.Op)
	if err != nil {
		return c.bad(err)
	}
	switch op {
	case "list":
		if a.ID != nil || a.Confirm != nil {
			return c.failMsg(sb.EINVALID, "trash op list takes no id or confirm")
		}
		return c.trashList()
	case "restore":
		id, err := c.text("id", a.ID)
		if err != nil {
			return c.bad(err)
		}
		return c.trashRestore(id)
	case "empty":
		if a.ID != nil {
			return c.failMsg(sb.EINVALID, "trash op empty takes no id; it empties your whole part of the trash bin")
		}
		return c.trashEmpty(boolOr(a.Confirm, false))
	}
	return c.failMsg(sb.EINVALID, "op must be list, restore or empty, not %s", quote(op))
}

// mine splits the trash into the agent's items (original location inside
// the root) and the count of everybody else's.
func (c *invocation) mine() (own []sb.TrashItem, others int, err error) {
	items, err := c.nc.Trash(c.ctx)
	if err != nil {
		return nil, 0, err
	}
	for _, it := range items {
		if c.scope.contains(it.OriginalLocation) && it.OriginalLocation != c.scope.root {
			own = append(own, it)
		} else {
			others++
		}
	}
	return own, others, nil
}

func (c *invocation) trashLines(items []sb.TrashItem) []string {
	lines := make([]string, 0, len(items))
	for _, it := range items {
		kind := "file"
		if it.IsDir {
			kind = "folder"
		}
		line := fmt.Sprintf("id %s was %s %s %s", strconv.Quote(it.ID), strconv.Quote(c.scope.show(it.OriginalLocation)), kind, humanBytes(it.Size))
		if !it.DeletedAt.IsZero() {
			line += " deleted " + utcMinute(it.DeletedAt)
		}
		lines = append(lines, line)
	}
	return lines
}

func (c *invocation) trashList() sb.Envelope {
	if c.preflight {
		return checked
	}
	own, _, err := c.mine()
	if err != nil {
		return c.fail("cannot list the trash bin", err)
	}
	data := map[string]any{"count": len(own), "listing": frame("trash", c.trashLines(own))}
	if len(own) == 0 {
		data["message"] = "nothing of yours is in the trash bin"
	} else {
		data["message"] = "Nextcloud.trash {op: restore, id} puts an item back where it was"
	}
	return sb.OK(data)
}

func (c *invocation) trashRestore(id string) sb.Envelope {
	if c.preflight {
		return checked
	}
	own, _, err := c.mine()
	if err != nil {
		return c.fail("cannot restore "+quote(id)+" from the trash bin", err)
	}
	for _, it := range own {
		if it.ID == id {
			if err := c.nc.RestoreTrash(c.ctx, id); err != nil {
				return c.fail("cannot restore "+quote(id)+" from the trash bin", err)
			}
			return sb.OK(map[string]any{"id": id, "path": c.scope.show(it.OriginalLocation),
				"message": "restored " + c.scope.show(it.OriginalLocation) + " (if that name was taken meanwhile, Nextcloud adds \" (restored)\" to it)"})
		}
	}
	return c.failMsg(sb.ENOTFOUND, "none of your items in the trash bin has the id %s; Nextcloud.trash {op: list} shows the ids", quote(id))
}

// trashEmpty needs confirm: true; without it, it answers what would be
// lost. The server empties the whole bin of the account at once, so it
// refuses while the bin holds anything from outside the agent's folder.
func (c *invocation) trashEmpty(confirm bool) sb.Envelope {
	if c.preflight {
		return checked
	}
	own, others, err := c.mine()
	if err != nil {
		return c.fail("cannot empty the trash bin", err)
	}
	if others > 0 {
		return c.failMsg(sb.EFORBIDDEN, "the trash bin belongs to the whole Nextcloud account and holds %d item(s) from outside your folder; "+
			"emptying it would destroy them too, so the tool does not do it — ask the operator, or let Nextcloud expire old items by itself", others)
	}
	if len(own) == 0 {
		return sb.OK(map[string]any{"count": 0, "message": "the trash bin is empty already"})
	}
	var total int64
	for _, it := range own {
		total += it.Size
	}
	if !confirm {
		return sb.Envelope{Status: "ok", NeedsConfirmation: true, Data: map[string]any{
			"count": len(own), "bytes": total, "size": humanBytes(total),
			"listing": frame("trash", c.trashLines(own)),
			"message": fmt.Sprintf("emptying the trash bin destroys these %d item(s) (%s) for good; nothing was deleted. "+
				"Ask the human, and call Nextcloud.trash {op: empty, confirm: true} only if they agree", len(own), humanBytes(total)),
		}}
	}
	if err := c.nc.EmptyTrash(c.ctx); err != nil {
		return c.fail("cannot empty the trash bin", err)
	}
	return sb.OK(map[string]any{"count": len(own), "bytes": total,
		"message": fmt.Sprintf("emptied the trash bin: %d item(s), %s, are gone for good", len(own), humanBytes(total))})
}
