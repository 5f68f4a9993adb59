package ncfake

import (
	"context"
	"os"
	"time"
)

// Entry is a file or folder of the account, for a sandbox UI.
type Entry struct {
	Path     string // absolute, e.g. /Switchboard/Hermes/report.md
	Dir      bool
	Size     int64
	Modified time.Time
}

// Tree returns every file and folder below (and including) dir, parents
// before children.
func (s *Server) Tree(dir string) []Entry {
	var out []Entry
	s.walk(clean(dir), func(p string, fi os.FileInfo) {
		out = append(out, Entry{Path: p, Dir: fi.IsDir(), Size: fi.Size(), Modified: fi.ModTime()})
	})
	return out
}

// MkdirAll creates folder p and its missing parents, as a person would in
// the web UI before giving the account to an agent.
func (s *Server) MkdirAll(p string) error {
	p = clean(p)
	if p == "/" {
		return nil
	}
	if _, err := s.stat(p); err == nil {
		return nil
	}
	if err := s.MkdirAll(parentOf(p)); err != nil {
		return err
	}
	return s.fs.Mkdir(context.Background(), p, 0o777)
}

// PathOf returns the current path of the file with id (the id in a
// /f/<fileid> link), "" when there is none.
func (s *Server) PathOf(id int64) string { return s.pathOf(id) }

// SharedWith returns whom the file at p is shared with, in the order the
// shares were made: user and group ids, and "public link" for each link.
func (s *Server) SharedWith(p string) []string {
	id := s.idOf(clean(p))
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, sh := range s.shares {
		switch {
		case id == 0 || sh.fileID != id:
		case sh.typ == 3:
			out = append(out, "public link")
		default:
			out = append(out, sh.shareWith)
		}
	}
	return out
}
