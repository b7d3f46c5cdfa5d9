package ingest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/ingest/records"
	"github.com/productdata/pds/snapshots"
)

// Run builds a snapshot. An incremental build whose base (its snapshot or
// its kept records) is damaged fails, leaving nothing behind, with an error
// that names the file and says to build whole (baseDamaged).
func Run(ctx context.Context, opts Options) (_ Summary, err error) {
	defer func() {
		if err != nil && opts.Base != "" && baseDamaged(err) {
			err = fmt.Errorf("%w; the base cannot be built on: build this snapshot whole from the full input, without --base (with --keep-records, so that the next night can build on it)", err)
		}
	}()
	start := time.Now()
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if epoch := opts.SourceDateEpoch; !epoch.IsZero() {
		opts.Now = func() time.Time { return epoch }
	}
	if opts.Sequence == 0 {
		opts.Sequence = opts.Now().UnixMilli()
	}
	if opts.Rejects == nil {
		opts.Rejects = io.Discard
	}
	b := &builder{opts: opts, parties: map[string]*domain.Party{}, printed: map[string]int{}, printedReplaced: map[string]int{},
		partyLine: map[string]int{}, sourceLine: map[string]int{}, seen: newIDFilter(seenBytes), sample: newSubjectSample(samplesWanted),
		cat: catalog{sources: map[string]*domain.Source{}}}
	b.summary = Summary{Out: opts.Out, Accepted: map[string]int64{}, Rejected: map[string]int64{},
		Files: map[string]string{}, Unknown: map[string]UnknownMembers{}, Replaced: map[string]int64{}}
	b.current.Store("")

	if err := checkOut(opts); err != nil {
		return b.summary, err
	}
	inputs, ignored, err := findInputs(opts.In)
	if err != nil {
		return b.summary, err
	}
	b.inputs, b.summary.Ignored = inputs, ignored
	for logical, name := range inputs.paths {
		b.summary.Files[logical] = name
	}
	// The temporary folder's name is the build's until its id is known (at
	// the end: see buildID).
	w, err := snapshots.Create(opts.Out, ulid.MustNew(ulid.Timestamp(opts.Now()), rand.Reader).String())
	if err != nil {
		return b.summary, err
	}
	defer w.Close()
	b.summary.RemovedStale = w.RemovedStale
	stop := b.startProgress()
	defer stop()
	if opts.Base != "" {
		// The base's kept records are checked here, its snapshot's
		// store and search index when the build starts on them.
		b.stage(stageBase)
		if err := b.openBase(); err != nil {
			return b.summary, err
		}
		defer b.up.close()
	} else if _, ok := inputs.paths[FileDeletions]; ok {
		return b.summary, fmt.Errorf("input: %s is read only by an incremental build (--base)", inputs.paths[FileDeletions])
	}
	if opts.KeepRecords || opts.Base != "" {
		if err := b.createKept(w.ID()); err != nil {
			return b.summary, err
		}
		defer func() {
			if b.kept != nil {
				b.kept.Abort()
			}
			b.keptTemp.Release()
		}()
	}

	if err := b.build(ctx, w); err != nil {
		return b.summary, err
	}

	b.stage(stageManifest)
	b.summary.BuildID = b.buildID()
	m := snapshots.Manifest{BuildID: b.summary.BuildID, CreatedAt: opts.Now().UTC().Format(time.RFC3339), InputDigest: b.digest.String(),
		Counts: b.summary.Accepted, Rejected: b.summary.Rejected, Sequence: opts.Sequence}
	m.Counts["views"] = b.summary.Views
	if b.up != nil {
		m.InputDigest = b.up.inputDigest(m.InputDigest)
		m.Counts = b.up.counts(b)
	}
	if b.kept != nil {
		if err := b.finishKept(m.Counts); err != nil {
			return b.summary, err
		}
	}
	if err := w.WriteManifest(m, b.storeSums); err != nil {
		return b.summary, err
	}
	delete(b.summary.Accepted, "views")
	b.stage(stagePublish)
	if err := w.Publish(); err != nil {
		return b.summary, err
	}
	if b.keptTemp != nil {
		if err := os.Rename(b.keptTemp.Path, recordsDir(opts.Out)); err != nil {
			return b.summary, fmt.Errorf("kept records: %w", err)
		}
		b.summary.Records = recordsDir(opts.Out)
	}
	if u := b.up; u != nil {
		changed := int64(len(u.replaced))
		b.summary.Incremental = &Incremental{Base: opts.Base, Changed: changed,
			Added: u.computed.products - int64(len(u.replayed)) - changed, Deleted: int64(len(u.deleted)),
			Recomputed: int64(len(u.replayed)), Kept: u.baseCounts[FileProducts] - u.dropped.products,
			ChangedSources: u.changedSources}
		if b.layered {
			b.summary.Incremental.StoreLayers = b.layers
		}
		b.summary.Incremental.SearchIndex = b.indexReport
	}
	b.stage("")
	stop()
	b.summary.InputDigest = m.InputDigest
	b.summary.Duration = time.Since(start)
	return b.summary, nil
}

// baseDamaged reports whether err is a check of the base that failed: a file
// of its snapshot or kept records that does not match its checksum, or a
// block whose checksum does not match.
func baseDamaged(err error) bool {
	return errors.Is(err, snapshots.ErrInvalid) || errors.Is(err, domain.ErrDamaged) || errors.Is(err, records.ErrDamaged)
}

// buildID is the build's id: a ULID of the build's time. Its random part is
// random, or, when the build's time is SourceDateEpoch's, the first 10 bytes
// of SHA-256("pds build id", input digest, sequence): the same input and
// sequence then make the same id, and any other input another one.
func (b *builder) buildID() string {
	now := ulid.Timestamp(b.opts.Now())
	if b.opts.SourceDateEpoch.IsZero() {
		return ulid.MustNew(now, rand.Reader).String()
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "pds build id\x00%s\x00%d", b.digest.String(), b.opts.Sequence))
	var id ulid.ULID
	if err := id.SetTime(now); err != nil {
		return ulid.MustNew(now, rand.Reader).String()
	}
	copy(id[6:], sum[:10])
	return id.String()
}
