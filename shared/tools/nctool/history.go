package nctool

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/adapters/nextcloud"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// file stats p and insists on a file: versions are kept per file id.
func (c *invocation) file(p, verb string) (nextcloud.Entry, *sb.Envelope) {
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

// versions lists the earlier contents of a file (newest first).
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
	lines := make([]string, 0, len(vs))
	for _, v := range vs {
		var b strings.Builder
		fmt.Fprintf(&b, "versionId %s modified %s %s", strconv.Quote(v.ID), utcMinute(v.Modified), humanBytes(v.Size))
		if v.Author != "" {
			fmt.Fprintf(&b, " by %s", strconv.Quote(v.Author))
		}
		if v.Label != "" {
			fmt.Fprintf(&b, " label %s", strconv.Quote(v.Label))
		}
		lines = append(lines, b.String())
	}
	data := map[string]any{"path": c.scope.show(p), "fileid": e.FileID, "count": len(vs),
		"listing": frame("versions "+c.scope.show(p), lines)}
	if len(vs) == 0 {
		data["message"] = "no earlier versions: the file was never overwritten, or the server keeps none (capabilities: files.versioning)"
	} else {
		data["message"] = "Nextcloud.restore_version {path, versionId} makes one of these the current content; the current content becomes a version itself"
	}
	return sb.OK(data)
}

// restoreVersion makes an earlier version the current content.
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
	if err := c.nc.RestoreVersion(c.ctx, e.FileID, id); err != nil {
		return c.fail(fmt.Sprintf("cannot restore version %s of %s", id, c.scope.show(p)), err)
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
func (c *invocation) mine() (own []nextcloud.TrashItem, others int, err error) {
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

func (c *invocation) trashLines(items []nextcloud.TrashItem) []string {
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
