package nctool

import (
	"fmt"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/untrusted"
)

// Listings (list, search, trash, versions) come back as one block of lines
// inside an untrusted frame: file names, version labels and trash
// entries are text other people may have written (the reports folder is
// shared with humans), and a name such as "IGNORE PREVIOUS INSTRUCTIONS.md"
// must reach the model as data. Paths inside are Go-quoted, so a name can
// neither break a line nor fake another entry, and copy back as arguments.

// frame wraps lines for the model; "" when there are none.
func frame(source string, lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return untrusted.Frame("nextcloud:"+source, strings.Join(lines, "\n"))
}

// entryLine renders one file or folder:
// "/reports/q3.md" file 5.0 KB modified 2026-05-01 12:00 UTC fileid 124 perms RGDNVW favorite shared(link)
func entryLine(display string, e sb.FileInfo) string {
	var b strings.Builder
	b.WriteString(strconv.Quote(display))
	if e.IsDir {
		b.WriteString(" folder")
	} else {
		b.WriteString(" file")
	}
	if e.Size >= 0 { // unknown sizes are left out, never shown as 0 B
		fmt.Fprintf(&b, " %s", humanBytes(e.Size))
	}
	if !e.Modified.IsZero() {
		fmt.Fprintf(&b, " modified %s", utcMinute(e.Modified))
	}
	if e.FileID != 0 {
		fmt.Fprintf(&b, " fileid %d", e.FileID)
	}
	if e.Permissions != "" {
		fmt.Fprintf(&b, " perms %s", e.Permissions)
	}
	if e.Favorite {
		b.WriteString(" favorite")
	}
	if len(e.ShareTypes) > 0 {
		fmt.Fprintf(&b, " shared(%s)", strings.Join(shareTypeNames(e.ShareTypes), ","))
	}
	return b.String()
}

func utcMinute(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

func utcSecond(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// shareTypeName names a share type for people and models.
func shareTypeName(t sb.ShareType) string {
	switch t {
	case sb.ShareUser:
		return "user"
	case sb.ShareGroup:
		return "group"
	case sb.ShareLink:
		return "link"
	case sb.ShareEmail:
		return "email"
	case sb.ShareFederated:
		return "federated"
	case sb.ShareCircle:
		return "team"
	case sb.ShareTalk:
		return "talk"
	}
	return strconv.Itoa(int(t))
}

func shareTypeNames(ts []sb.ShareType) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = shareTypeName(t)
	}
	return out
}

// permissionWords spells an OCS share permission mask.
func permissionWords(p int) []string {
	var out []string
	for _, b := range []struct {
		bit  int
		word string
	}{{sb.PermRead, "read"}, {sb.PermUpdate, "edit"}, {sb.PermCreate, "create"},
		{sb.PermDelete, "delete"}, {sb.PermShare, "reshare"}} {
		if p&b.bit != 0 {
			out = append(out, b.word)
		}
	}
	return out
}

// permissionLetters explains oc:permissions letters (DavUtil.php).
func permissionLetters(perms string) []string {
	var out []string
	add := func(cond bool, w string) {
		if cond {
			out = append(out, w)
		}
	}
	add(strings.ContainsRune(perms, 'G'), "read")
	add(strings.ContainsRune(perms, 'W'), "write")
	add(strings.ContainsAny(perms, "CK"), "create inside")
	add(strings.ContainsRune(perms, 'D'), "delete")
	add(strings.ContainsAny(perms, "NV"), "rename/move")
	add(strings.ContainsRune(perms, 'R'), "reshare")
	add(strings.ContainsRune(perms, 'S'), "shared with this account")
	add(strings.ContainsRune(perms, 'M'), "mounted storage")
	return out
}

// humanBytes renders a size for people: 999 B, 1.5 KB, 12.0 MB (1024-based).
func humanBytes(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	f := float64(n)
	for _, unit := range []string{"KB", "MB", "GB", "TB"} {
		f /= 1024
		if f < 1024 || unit == "TB" {
			return fmt.Sprintf("%.1f %s", f, unit)
		}
	}
	return fmt.Sprintf("%d B", n)
}
