package ingest

import (
	"testing"
	"time"
)

// A stage that reads records reports them and their rate; the stages after
// the views, which count none, say what they do and for how long instead of
// "0 records (0/s)" for as long as they run.
func TestProgressLine(t *testing.T) {
	for _, tc := range []struct {
		stage             string
		done, total       int64
		interval, running time.Duration
		want              string
	}{
		{"claims.ndjson", 250000, 1250000, time.Second, 5 * time.Second, "ingest: claims.ndjson: 1250000 records (250000/s)"},
		{"views", 6000, 30000, 2 * time.Second, 9 * time.Second, "ingest: views: 30000 records (3000/s)"},
		{stageFinishing, 0, 1000000, time.Second, 12700 * time.Millisecond,
			"ingest: finishing: merging the search index and writing the store's last tables (12s)"},
		{stageManifest, 0, 0, time.Second, 3 * time.Second, "ingest: manifest: checksumming the snapshot's files (3s)"},
		{stagePublish, 0, 0, time.Second, 1500 * time.Millisecond, "ingest: publish: syncing the snapshot to disk (1s)"},
	} {
		if got := progressLine(tc.stage, tc.done, tc.total, tc.interval, tc.running); got != tc.want {
			t.Errorf("progressLine(%q) = %q, want %q", tc.stage, got, tc.want)
		}
	}
}
