package ingest

import (
	"fmt"
	"time"

	"github.com/productdata/pds/internal/progress"
)

// startProgress prints a line about once a second until the returned stop is
// called (stop may be called more than once).
func (b *builder) startProgress() (stop func()) {
	if b.opts.Progress == nil {
		return func() {}
	}
	last, lastName, lastAt := int64(0), "", time.Now()
	return progress.Start(b.opts.ProgressEvery, func(now time.Time) {
		name, _ := b.current.Load().(string)
		if name == "" {
			return // between stages
		}
		n := b.count.Load()
		if name != lastName {
			last, lastName = 0, name
		}
		fmt.Fprintln(b.opts.Progress, progressLine(name, n-last, n, now.Sub(lastAt), now.Sub(b.stageStart())))
		last, lastAt = n, now
	})
}

// progressLine is one progress line: the stage, its records so far (total)
// and their rate (done in the last interval); a stage that counts no
// records says what it does and how long it has run instead of "0/s".
func progressLine(stage string, done, total int64, interval, running time.Duration) string {
	if what, ok := finishingStages[stage]; ok {
		return fmt.Sprintf("ingest: %s: %s (%s)", stage, what, running.Truncate(time.Second))
	}
	return fmt.Sprintf("ingest: %s: %d records (%.0f/s)", stage, total, float64(done)/interval.Seconds())
}

// The stages that count no records (the check of an incremental build's
// base, and those after the views); finishingStages says what each does,
// for the progress lines.
const (
	stageBase      = "base"
	stageFinishing = "finishing"
	stageManifest  = "manifest"
	stagePublish   = "publish"
)

var finishingStages = map[string]string{
	stageBase:      "opening the base and checking its files",
	stageFinishing: "merging the search index and writing the store's last tables",
	stageManifest:  "checksumming the snapshot's files",
	stagePublish:   "syncing the snapshot to disk",
}

// stage starts the stage name: the progress lines name it, its records are
// counted from zero, and the summary gets its duration.
func (b *builder) stage(name string) {
	now := time.Now()
	b.stageMu.Lock()
	if n := len(b.summary.Stages); n > 0 && b.summary.Stages[n-1].Duration == 0 {
		b.summary.Stages[n-1].Duration = now.Sub(b.stageAt)
	}
	if name != "" {
		b.summary.Stages = append(b.summary.Stages, StageTime{Name: name})
	}
	b.stageAt = now
	b.stageMu.Unlock()
	b.current.Store(name)
	b.count.Store(0)
}

// stageStart is when the current stage started.
func (b *builder) stageStart() time.Time {
	b.stageMu.Lock()
	defer b.stageMu.Unlock()
	return b.stageAt
}
