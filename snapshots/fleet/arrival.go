package fleet

import (
	"encoding/json"
	"os"
	"path/filepath"
	"time"
)

// An Arrival records how a pull or apply brought a build into a snapshots
// directory: as SNAPSHOTS/.arrival-<build_id>.json beside the build (the
// build's own folder holds only what its manifest lists). pds serve reads
// it when it swaps to the build, for /metrics; Prune removes it with the
// build.
type Arrival struct {
	BuildID   string `json:"build_id"`
	Via       string `json:"via"`                  // ViaDelta or ViaFull
	DeltaFrom string `json:"delta_from,omitempty"` // the kept build a delta started from
	Bytes     int64  `json:"bytes"`                // fetched from the origin (or the bundle's size)
	Objects   int64  `json:"objects,omitempty"`    // read from the origin
	At        string `json:"at"`
}

const arrivalPre = ".arrival-"

func arrivalPath(snaps, id string) string {
	return filepath.Join(snaps, arrivalPre+id+".json")
}

// writeArrival records how p's build came; a build that was already on disk
// (Via "") gets no record. It is a note for metrics: failing to write it
// fails nothing.
func writeArrival(snaps string, p *Pulled) {
	if p.Via == "" {
		return
	}
	b, err := json.Marshal(Arrival{BuildID: p.ID, Via: p.Via, DeltaFrom: p.DeltaBase, Bytes: p.Downloaded, Objects: p.Objects,
		At: time.Now().UTC().Format(time.RFC3339)})
	if err == nil {
		writeSynced(arrivalPath(snaps, p.ID), b)
	}
}

// ArrivalOf reads how the build in dir (a build folder in a snapshots
// directory, links resolved) came; ok is false when nothing recorded it (a
// build served from where ingest wrote it, or pulled by an older pds).
func ArrivalOf(dir string) (a Arrival, ok bool) {
	dir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return a, false
	}
	b, err := os.ReadFile(arrivalPath(filepath.Dir(dir), filepath.Base(dir)))
	if err != nil || json.Unmarshal(b, &a) != nil || a.BuildID != filepath.Base(dir) {
		return Arrival{}, false
	}
	return a, true
}
