package service

import (
	"encoding/json"
	"sync/atomic"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/snapshots"
)

// Snapshot is one opened, verified snapshot (snapshots.Open) with what the
// service derives from it once: its sources by id, the longest GTIN prefix
// a source covers, and the stamp its answers carry. It counts the calls
// that use it, so that a swap closes it after the last one.
type Snapshot struct {
	*snapshots.Snapshot
	sources   []*domain.Source // sorted by id
	prefixLen int              // the longest gtin prefix any source lists
	byID      map[string]*domain.SourceDescriptor
	refs      atomic.Int64
	stamp     *Stamp
}

// Stamp names the snapshot that made an answer: its manifest's build id and
// creation time, which every answer read from a snapshot carries in
// meta.snapshot (and REST in response headers).
type Stamp struct {
	BuildID   string
	CreatedAt string
	meta      []byte // ,"snapshot":{...} ready for the envelope's meta
}

func newStamp(m snapshots.Manifest) *Stamp {
	b, _ := json.Marshal(struct {
		BuildID   string `json:"build_id"`
		CreatedAt string `json:"created_at"`
	}{m.BuildID, m.CreatedAt})
	return &Stamp{BuildID: m.BuildID, CreatedAt: m.CreatedAt, meta: append([]byte(`,"snapshot":`), b...)}
}

// stamped marks res as answered from s.
func (s *Snapshot) stamped(res *Result, err error) (*Result, error) {
	if res != nil {
		res.Snapshot = s.stamp
	}
	return res, err
}

// OpenSnapshot opens the snapshot at dir (snapshots.Open: verified, and
// signed by o.PublicKey when that is set) for serving.
func OpenSnapshot(dir string, o snapshots.OpenOptions) (*Snapshot, error) {
	data, err := snapshots.Open(dir, o)
	if err != nil {
		return nil, err
	}
	s := &Snapshot{Snapshot: data, byID: map[string]*domain.SourceDescriptor{}, stamp: newStamp(data.Manifest)}
	s.refs.Store(1)
	for _, d := range data.Sources {
		s.byID[d.ID] = d
		s.sources = append(s.sources, &d.Source)
		if d.Covers != nil {
			for _, p := range d.Covers.GTINPrefixes {
				s.prefixLen = max(s.prefixLen, len(p))
			}
		}
	}
	return s, nil
}

// acquire takes a reference; false when the snapshot is already retired.
func (s *Snapshot) acquire() bool {
	for {
		n := s.refs.Load()
		if n <= 0 {
			return false
		}
		if s.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// release drops a reference and closes the snapshot after the last one.
func (s *Snapshot) release() {
	if s.refs.Add(-1) == 0 {
		s.close()
	}
}

func (s *Snapshot) close() { s.Snapshot.Close() }

// Close drops the opener's reference; use it only for a snapshot that was
// never handed to a Service.
func (s *Snapshot) Close() { s.release() }
