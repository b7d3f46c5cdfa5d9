package index

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	segment "github.com/blevesearch/scorch_segment_api/v2"
	zapv15 "github.com/blevesearch/zapx/v15"
)

// A served index's Bleve segments are read from private copies, not from
// the snapshot's files. Bleve maps a segment into memory and reads it on
// goroutines of its own (a search over several segments reads each on one),
// so a file cut short under the server would stop the process with SIGBUS
// on a goroutine that nothing of pds runs and no recover reaches. A copy is
// made when the index is opened (OpenWith), into memory of the process
// (privateCopy: on Linux a sealed memfd, which no one can cut, grow or
// write), checked by the caller (OpenOptions.CheckCopy), and only then
// given to Bleve. The copies are freed when the index is closed.
//
// The doc store's entries (docs.idx) are copied the same way and mapped
// (openServedStore): read in place, they take no room on the Go heap.
//
// Bleve picks a segment's reader from a registry of its own, by the format
// the index's root.bolt names: orderedZap for every index of pds. Its Open
// makes a private copy of the segments of the indexes that OpenWith is
// opening (servedDirs) and opens every other segment (those a build opens
// to merge them) as zap does.

// Copied reports whether the index's file at rel (slash-separated, in the
// index's folder) is read from a private copy when the index is served, and
// so is given to OpenOptions.CheckCopy as it is opened rather than read
// before: Bleve's segments and the doc store's entries.
func Copied(rel string) bool {
	return strings.HasSuffix(rel, ".zap") || rel == docsIdxFile
}

// servedDirs are the folders of the Bleve stores being opened by OpenWith,
// by the prefix of their segments' paths.
var servedDirs = struct {
	sync.Mutex
	m map[string]*served
}{m: map[string]*served{}}

// served is a store being opened: its options, and the first error of
// opening one of its segments (Bleve logs that and goes on to an older
// list of segments, or none).
type served struct {
	opens int
	o     OpenOptions
	err   error
}

// serve registers the segments under store as served, with o, until the
// returned func is called; that returns the first error of opening one of
// them.
func serve(store string, o OpenOptions) (done func() error) {
	prefix := filepath.Clean(store) + string(filepath.Separator)
	servedDirs.Lock()
	defer servedDirs.Unlock()
	s := servedDirs.m[prefix]
	if s == nil {
		s = &served{}
		servedDirs.m[prefix] = s
	}
	s.opens++
	s.o = o
	return func() error {
		servedDirs.Lock()
		defer servedDirs.Unlock()
		if s.opens--; s.opens == 0 {
			delete(servedDirs.m, prefix)
		}
		return s.err
	}
}

// servedAt returns the served store that holds the segment at path, or
// nil.
func servedAt(path string) *served {
	servedDirs.Lock()
	defer servedDirs.Unlock()
	for prefix, s := range servedDirs.m {
		if strings.HasPrefix(filepath.Clean(path), prefix) {
			return s
		}
	}
	return nil
}

// Open opens the segment at path: a private copy of it when it belongs to
// an index being served, the file itself otherwise.
func (p orderedZap) Open(path string) (segment.Segment, error) {
	s := servedAt(path)
	if s == nil {
		return p.ZapPlugin.Open(path)
	}
	servedDirs.Lock()
	check, copyDir := s.o.CheckCopy, s.o.CopyDir
	servedDirs.Unlock()
	seg, err := openPrivate(p.ZapPlugin, path, check, copyDir)
	if err != nil {
		servedDirs.Lock()
		if s.err == nil {
			s.err = err
		}
		servedDirs.Unlock()
	}
	return seg, err
}

// openPrivate opens a private copy of the segment at path, checked by check
// (when set) before zap reads it: in memory, or in copyDir when set.
func openPrivate(z *zapv15.ZapPlugin, path string, check func(string, io.Reader) error, copyDir string) (segment.Segment, error) {
	src, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	cp, name, err := privateCopy(src, copyDir)
	if err != nil {
		return nil, fmt.Errorf("index: a private copy of %s: %w", path, err)
	}
	if cp == nil { // the platform cannot cut a mapped file: map it
		if check != nil {
			if err := check(path, io.NewSectionReader(src, 0, 1<<62)); err != nil {
				return nil, err
			}
		}
		return z.Open(path)
	}
	defer cp.Close() // zap opens the copy again by name, and keeps that
	if check != nil {
		if err := check(path, io.NewSectionReader(cp, 0, 1<<62)); err != nil {
			return nil, err
		}
	}
	seg, err := z.Open(name)
	if err != nil {
		return nil, fmt.Errorf("index: a private copy of %s: %w", path, err)
	}
	return &privateSegment{Segment: seg.(*zapv15.Segment), path: path}, nil
}

// privateSegment is a segment read from a private copy: it is zap's
// segment, but for its path, which is the file the copy was made of (for
// Bleve's statistics; the copy's is a file descriptor's).
type privateSegment struct {
	*zapv15.Segment
	path string
}

// Path is the path of the file the segment was copied from.
func (s *privateSegment) Path() string { return s.path }
