package ncfake

import (
	"context"
	"encoding/xml"
	"fmt"
	"net/http"
	"os"
	"path"
	"strconv"
	"strings"

	"golang.org/x/net/webdav"
)

const (
	nsDAV = "DAV:"
	nsOC  = "http://owncloud.org/ns"
	nsNC  = "http://nextcloud.org/ns"
)

// ncFS wraps the memory FS to keep Nextcloud's file ids: a new node gets
// the next id, a rename carries ids along, a removal drops them.
type ncFS struct {
	s     *Server
	inner webdav.FileSystem
}

var _ webdav.FileSystem = (*ncFS)(nil)

func clean(name string) string { return path.Clean("/" + name) }

func (f *ncFS) Mkdir(ctx context.Context, name string, perm os.FileMode) error {
	if err := f.inner.Mkdir(ctx, name, perm); err != nil {
		return err
	}
	f.s.assignID(clean(name))
	return nil
}

func (f *ncFS) OpenFile(ctx context.Context, name string, flag int, perm os.FileMode) (webdav.File, error) {
	created := false
	if flag&os.O_CREATE != 0 {
		if _, err := f.inner.Stat(ctx, name); os.IsNotExist(err) {
			created = true
		}
	}
	file, err := f.inner.OpenFile(ctx, name, flag, perm)
	if err != nil {
		return nil, err
	}
	if created {
		f.s.assignID(clean(name))
	}
	return &ncFile{File: file, s: f.s, name: clean(name)}, nil
}

func (f *ncFS) RemoveAll(ctx context.Context, name string) error {
	if err := f.inner.RemoveAll(ctx, name); err != nil {
		return err
	}
	f.s.dropIDs(clean(name))
	return nil
}

func (f *ncFS) Rename(ctx context.Context, oldName, newName string) error {
	if err := f.inner.Rename(ctx, oldName, newName); err != nil {
		return err
	}
	f.s.moveIDs(clean(oldName), clean(newName))
	return nil
}

func (f *ncFS) Stat(ctx context.Context, name string) (os.FileInfo, error) {
	return f.inner.Stat(ctx, name)
}

// ncFile serves Nextcloud's properties as dead properties.
type ncFile struct {
	webdav.File
	s    *Server
	name string
}

var _ webdav.DeadPropsHolder = (*ncFile)(nil)

// computed lists the properties ncFile computes; clients cannot set them.
var computed = map[xml.Name]bool{
	{Space: nsOC, Local: "fileid"}:                 true,
	{Space: nsOC, Local: "id"}:                     true,
	{Space: nsOC, Local: "permissions"}:            true,
	{Space: nsOC, Local: "size"}:                   true,
	{Space: nsOC, Local: "share-types"}:            true,
	{Space: nsNC, Local: "has-preview"}:            true,
	{Space: nsDAV, Local: "quota-available-bytes"}: true,
	{Space: nsDAV, Local: "quota-used-bytes"}:      true,
}

func (f *ncFile) DeadProps() (map[xml.Name]webdav.Property, error) {
	fi, err := f.File.Stat()
	if err != nil {
		return nil, err
	}
	props := map[xml.Name]webdav.Property{}
	for name, val := range f.s.ncProps(f.name, fi.IsDir(), fi.Size()) {
		props[name] = webdav.Property{XMLName: name, InnerXML: []byte(val)}
	}
	if dph, ok := f.File.(webdav.DeadPropsHolder); ok {
		stored, err := dph.DeadProps()
		if err != nil {
			return nil, err
		}
		for name, p := range stored {
			if !computed[name] {
				props[name] = p
			}
		}
	}
	return props, nil
}

func (f *ncFile) Patch(patches []webdav.Proppatch) ([]webdav.Propstat, error) {
	refused := webdav.Propstat{Status: http.StatusForbidden}
	dependent := webdav.Propstat{Status: http.StatusFailedDependency}
	for _, p := range patches {
		for _, prop := range p.Props {
			if computed[prop.XMLName] {
				refused.Props = append(refused.Props, webdav.Property{XMLName: prop.XMLName})
			} else {
				dependent.Props = append(dependent.Props, webdav.Property{XMLName: prop.XMLName})
			}
		}
	}
	if len(refused.Props) > 0 {
		// Patching is atomic: one refused property fails them all.
		out := []webdav.Propstat{refused}
		if len(dependent.Props) > 0 {
			out = append(out, dependent)
		}
		return out, nil
	}
	dph, ok := f.File.(webdav.DeadPropsHolder)
	if !ok {
		return nil, fmt.Errorf("ncfake: inner file keeps no properties")
	}
	return dph.Patch(patches)
}

// ncProps computes Nextcloud's extra properties for name. Values are
// InnerXML, self-contained as webdav.Property requires.
func (s *Server) ncProps(name string, isDir bool, size int64) map[xml.Name]string {
	s.mu.Lock()
	id := s.ids[name]
	types := s.shareTypesLocked(id)
	quota := s.quota
	s.mu.Unlock()

	perms := "RGDNVW"
	if isDir {
		perms = "RGDNVCK"
		size = s.treeSize(name)
	}
	var st strings.Builder
	for _, t := range types {
		fmt.Fprintf(&st, `<share-type xmlns="%s">%d</share-type>`, nsOC, t)
	}
	props := map[xml.Name]string{
		{Space: nsOC, Local: "fileid"}:      strconv.FormatInt(id, 10),
		{Space: nsOC, Local: "id"}:          fmt.Sprintf("%08d%s", id, instanceID),
		{Space: nsOC, Local: "permissions"}: perms,
		{Space: nsOC, Local: "size"}:        strconv.FormatInt(size, 10),
		{Space: nsOC, Local: "share-types"}: st.String(),
		{Space: nsOC, Local: "favorite"}:    "0", // a stored PROPPATCH value wins
		{Space: nsNC, Local: "has-preview"}: "false",
	}
	if isDir {
		avail := int64(-3) // SPACE_UNLIMITED
		if quota >= 0 {
			avail = max(0, quota-s.treeSize("/"))
		}
		props[xml.Name{Space: nsDAV, Local: "quota-used-bytes"}] = strconv.FormatInt(size, 10)
		props[xml.Name{Space: nsDAV, Local: "quota-available-bytes"}] = strconv.FormatInt(avail, 10)
	}
	return props
}

// instanceID is the suffix of OC-FileId / oc:id ("oc" + random in Nextcloud).
const instanceID = "ocfake0001"

func (s *Server) assignID(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	s.ids[name] = s.nextID
}

func (s *Server) dropIDs(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for p := range s.ids {
		if under(p, name) {
			delete(s.ids, p)
		}
	}
}

func (s *Server) moveIDs(from, to string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	moved := map[string]int64{}
	for p, id := range s.ids {
		if under(p, from) {
			moved[to+strings.TrimPrefix(p, from)] = id
			delete(s.ids, p)
		}
	}
	for p, id := range moved {
		s.ids[p] = id
	}
}

// under reports whether p is dir or inside it.
func under(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// walk visits every node below (and including) name in the memory FS.
func (s *Server) walk(name string, fn func(p string, fi os.FileInfo)) {
	ctx := context.Background()
	fi, err := s.mem.Stat(ctx, name)
	if err != nil {
		return
	}
	fn(name, fi)
	if !fi.IsDir() {
		return
	}
	f, err := s.mem.OpenFile(ctx, name, os.O_RDONLY, 0)
	if err != nil {
		return
	}
	children, _ := f.Readdir(-1)
	f.Close()
	for _, c := range children {
		s.walk(path.Join(name, c.Name()), fn)
	}
}

// treeSize is the total size of the files below name.
func (s *Server) treeSize(name string) int64 {
	var n int64
	s.walk(name, func(_ string, fi os.FileInfo) {
		if !fi.IsDir() {
			n += fi.Size()
		}
	})
	return n
}
