package nextcloud

import (
	"encoding/xml"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Request bodies. They are constants so that golden tests pin them exactly.
const (
	// propfindFiles asks exactly for what Entry carries: mtime, etag, kind,
	// fileid, permissions, size, share types, favorite. getcontentlength is
	// the size of a file on a WebDAV server without Nextcloud's oc:size.
	propfindFiles = propfindOpen + fileProps + propfindClose
	// propfindOpen and propfindClose frame the properties a PROPFIND asks
	// for, one a line, in Nextcloud's three namespaces.
	propfindOpen = `<?xml version="1.0" encoding="UTF-8"?>
<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns">
  <d:prop>
`
	propfindClose = `  </d:prop>
</d:propfind>
`
	// fileProps are the properties of an Entry, one a line, indented for
	// the PROPFIND above; the SEARCH request selects the same.
	fileProps = `    <d:getlastmodified/>
    <d:getetag/>
    <d:getcontentlength/>
    <d:resourcetype/>
    <oc:fileid/>
    <oc:permissions/>
    <oc:size/>
    <oc:share-types/>
    <oc:favorite/>
`
	propfindQuota = `<?xml version="1.0" encoding="UTF-8"?>
<d:propfind xmlns:d="DAV:">
  <d:prop>
    <d:quota-available-bytes/>
    <d:quota-used-bytes/>
` + propfindClose
	propfindVersions = propfindOpen + `    <d:getlastmodified/>
    <d:getcontentlength/>
    <d:getcontenttype/>
    <d:getetag/>
    <d:resourcetype/>
    <nc:version-label/>
    <nc:version-author/>
` + propfindClose
	propfindTrash = propfindOpen + `    <d:resourcetype/>
    <d:getcontentlength/>
    <oc:fileid/>
    <oc:size/>
    <nc:trashbin-filename/>
    <nc:trashbin-original-location/>
    <nc:trashbin-deletion-time/>
` + propfindClose
	proppatchFavoriteFormat = `<?xml version="1.0" encoding="UTF-8"?>
<d:propertyupdate xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns">
  <d:set>
    <d:prop>
      <oc:favorite>%d</oc:favorite>
    </d:prop>
  </d:set>
</d:propertyupdate>
`
)

// Multistatus wire shapes. Only propstats with a 200 status count: Sabre
// lists unknown properties in a separate 404 propstat.
type msMultistatus struct {
	XMLName   xml.Name     `xml:"DAV: multistatus"`
	Responses []msResponse `xml:"DAV: response"`
}

type msResponse struct {
	Href      string       `xml:"DAV: href"`
	Status    string       `xml:"DAV: status"`
	Propstats []msPropstat `xml:"DAV: propstat"`
}

type msPropstat struct {
	Prop   msProp `xml:"DAV: prop"`
	Status string `xml:"DAV: status"`
}

type msProp struct {
	LastModified  string          `xml:"DAV: getlastmodified"`
	ETag          string          `xml:"DAV: getetag"`
	ContentType   string          `xml:"DAV: getcontenttype"`
	ContentLength string          `xml:"DAV: getcontentlength"`
	ResourceType  *msResourceType `xml:"DAV: resourcetype"`
	QuotaAvail    string          `xml:"DAV: quota-available-bytes"`
	QuotaUsed     string          `xml:"DAV: quota-used-bytes"`

	FileID      string        `xml:"http://owncloud.org/ns fileid"`
	Permissions string        `xml:"http://owncloud.org/ns permissions"`
	Size        string        `xml:"http://owncloud.org/ns size"`
	ShareTypes  *msShareTypes `xml:"http://owncloud.org/ns share-types"`
	Favorite    string        `xml:"http://owncloud.org/ns favorite"`

	VersionLabel  string `xml:"http://nextcloud.org/ns version-label"`
	VersionAuthor string `xml:"http://nextcloud.org/ns version-author"`

	TrashFilename string `xml:"http://nextcloud.org/ns trashbin-filename"`
	TrashLocation string `xml:"http://nextcloud.org/ns trashbin-original-location"`
	TrashDeleted  string `xml:"http://nextcloud.org/ns trashbin-deletion-time"`
}

type msResourceType struct {
	Collection *struct{} `xml:"DAV: collection"`
}

type msShareTypes struct {
	Types []int `xml:"http://owncloud.org/ns share-type"`
}

// props merges the 200-propstats of a response.
func (r msResponse) props() (msProp, bool) {
	var out msProp
	found := false
	for _, ps := range r.Propstats {
		if statusCode(ps.Status) != http.StatusOK {
			continue
		}
		found = true
		p := ps.Prop
		set := func(dst *string, v string) {
			if v != "" {
				*dst = v
			}
		}
		set(&out.LastModified, p.LastModified)
		set(&out.ETag, p.ETag)
		set(&out.ContentType, p.ContentType)
		set(&out.ContentLength, p.ContentLength)
		set(&out.QuotaAvail, p.QuotaAvail)
		set(&out.QuotaUsed, p.QuotaUsed)
		set(&out.FileID, p.FileID)
		set(&out.Permissions, p.Permissions)
		set(&out.Size, p.Size)
		set(&out.Favorite, p.Favorite)
		set(&out.VersionLabel, p.VersionLabel)
		set(&out.VersionAuthor, p.VersionAuthor)
		set(&out.TrashFilename, p.TrashFilename)
		set(&out.TrashLocation, p.TrashLocation)
		set(&out.TrashDeleted, p.TrashDeleted)
		if p.ResourceType != nil {
			out.ResourceType = p.ResourceType
		}
		if p.ShareTypes != nil {
			out.ShareTypes = p.ShareTypes
		}
	}
	return out, found
}

func (p msProp) isDir() bool { return p.ResourceType != nil && p.ResourceType.Collection != nil }

// statusCode reads "HTTP/1.1 200 OK".
func statusCode(s string) int {
	f := strings.Fields(s)
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(f[1])
	return n
}

func decodeMultistatus(r io.Reader) (*msMultistatus, error) {
	var ms msMultistatus
	if err := xml.NewDecoder(io.LimitReader(r, 32<<20)).Decode(&ms); err != nil {
		return nil, err
	}
	return &ms, nil
}

func parseInt(s string) int64 {
	n, _ := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	return n
}

func parseHTTPTime(s string) time.Time {
	t, err := http.ParseTime(strings.TrimSpace(s))
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}

// unquoteETag strips W/ and the quotes Nextcloud puts around ETags.
func unquoteETag(s string) string {
	s = strings.TrimPrefix(strings.TrimSpace(s), "W/")
	return strings.Trim(s, `"`)
}

// escapeXML escapes a literal for an XML text node.
func escapeXML(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}
