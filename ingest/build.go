package ingest

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"runtime/debug"
	"strings"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/ingest/scratch"
	"github.com/productdata/pds/kv"
	"github.com/productdata/pds/snapshots"
)

// MaxStoreLayers is how many nights' layers a store holds on top of the
// tables a build wrote whole: the night after that, an incremental build
// writes the store whole again. Each layer is one more table a read of a
// view looks into.
const MaxStoreLayers = 6

// maxStoreLayers is MaxStoreLayers, but in tests (SetMaxStoreLayers).
var maxStoreLayers = MaxStoreLayers

// build reads the input files in order into the scratch store, then joins
// the documents, writes the views and the search index, and finishes the
// store, all in w's folder.
func (b *builder) build(ctx context.Context, w *snapshots.Writer) (err error) {
	b.scratch, err = scratch.Open(w.Work("scratch"), orderedTables...)
	if err != nil {
		return err
	}
	defer func() {
		if b.scratch != nil {
			b.scratch.Close()
		}
	}()
	if b.up != nil {
		if b.layers, err = b.up.base.Layers(); err != nil {
			return fmt.Errorf("--base: %w", err)
		}
		b.layers++
		b.layered = b.layers <= maxStoreLayers
	}
	if b.layered {
		if b.out, err = w.StoreOn(b.up.base, b.opts.CheckBaseWhole); err != nil {
			return fmt.Errorf("--base: %w", err)
		}
	} else if b.out, err = w.Store(); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			b.out.Abort()
		}
	}()
	if b.up != nil {
		b.index, err = w.IndexFrom(b.up.base)
	} else {
		b.index, err = w.Index()
	}
	if err != nil {
		return fmt.Errorf("search index: %w", err)
	}
	defer func() {
		if b.index != nil {
			b.index.Close()
		}
	}()
	for _, ph := range b.phases() {
		if err := b.readFile(ctx, ph); err != nil {
			return err
		}
		if ph.file == FileSources {
			if err := b.finishSources(); err != nil {
				return err
			}
		}
		if err := b.scratch.Flush(); err != nil {
			return err
		}
	}
	// The id checks are over: the filter's 32 MiB of heap go back before
	// the views, whose live heap is the build's largest.
	b.seen = nil
	if b.up != nil {
		if err := b.plan(); err != nil {
			return err
		}
	}
	if err := b.joinDocuments(ctx); err != nil {
		return err
	}
	if err := b.writeViews(ctx); err != nil {
		return err
	}
	if b.kept != nil {
		if err := b.keepDocuments(); err != nil {
			return err
		}
	}
	// The views' garbage goes back to the system before the search index's
	// merge maps its segments: left to the collector's pace, the two
	// overlap, and the build's peak memory at a million products is the
	// moment between the stages.
	debug.FreeOSMemory()
	b.stage(stageFinishing)
	// Closing the search index merges its segments into one, seconds of
	// one core at a million products: it runs beside the rest of the
	// store's writing, which does not need it.
	ix := b.index
	b.index = nil
	indexed := make(chan error, 1)
	if b.up != nil {
		// Made once, here: the index's feed and the store's merge both read it.
		b.up.night()
	}
	go func() {
		if b.up != nil {
			// An incremental build's index is fed now, the products
			// computed and dropped in subject order, beside the store's
			// merge.
			if err := b.feedIndex(ix); err != nil {
				ix.Close()
				indexed <- err
				return
			}
		}
		err := ix.Close()
		b.indexReport = ix.Report()
		indexed <- err
	}()
	err = b.finishStore()
	// The store is finished while the search index is still merging on
	// one core: checksum the store's files for the manifest meanwhile
	// (seconds at a million products). Should that fail (nil sums), the
	// manifest checksums them itself, unless it failed on a table of the
	// base that is not the base's bytes.
	summed := make(chan map[string]snapshots.File, 1)
	var sumErr error
	if err == nil {
		go func() {
			var sums map[string]snapshots.File
			if b.layered {
				sums, sumErr = w.SumStoreOn(b.up.base)
			} else {
				sums, _ = w.SumStore()
			}
			summed <- sums
		}()
	} else {
		summed <- nil
	}
	if ierr := <-indexed; ierr != nil && err == nil {
		err = fmt.Errorf("search index: %w", ierr)
	}
	b.storeSums = <-summed
	if err == nil && errors.Is(sumErr, snapshots.ErrInvalid) {
		err = fmt.Errorf("--base: %w", sumErr)
	}
	if err == nil && b.up != nil {
		// The base's search segments the update kept are linked: their
		// checksums are the base's (and a copy must hash as the base's).
		ixSums, ierr := w.SumIndexOn(b.up.base, ix.KeptBase())
		switch {
		case errors.Is(ierr, snapshots.ErrInvalid):
			err = fmt.Errorf("--base: %w", ierr)
		case ierr == nil && b.storeSums == nil:
			b.storeSums = ixSums
		case ierr == nil:
			maps.Copy(b.storeSums, ixSums)
		}
	}
	if err != nil {
		return err
	}
	err = b.scratch.Close()
	b.scratch = nil
	return err
}

// finishStore writes what follows the views (aliases, sources, metadata)
// and finishes the store.
func (b *builder) finishStore() error {
	if b.up != nil {
		if err := b.writeNightViews(); err != nil {
			return err
		}
	}
	if err := b.writeAliases(); err != nil {
		return err
	}
	if err := b.writeSources(); err != nil {
		return err
	}
	if err := b.writeMeta(); err != nil {
		return err
	}
	return b.out.Finish()
}

// writeAliases writes one alias per product identifier, in identifier order:
// those of the scratch store, with the view tenants of their public
// products; in an incremental build, merged with the base's aliases of the
// products it keeps (which are written as they are).
func (b *builder) writeAliases() error {
	it, err := b.scratch.NewIter([]byte{tagAlias, 0})
	if err != nil {
		return err
	}
	defer it.Close()
	if err := b.scratch.Flush(); err != nil {
		return err
	}
	tenants, err := b.scratch.NewReader()
	if err != nil {
		return err
	}
	defer tenants.Close()
	var val, tv []byte
	// value is the alias of a staged entry, in val.
	value := func(v []byte) ([]byte, error) {
		c, owner, _ := splitOwned(v)
		a := kv.Alias{Subject: string(c), Owner: string(owner)}
		if a.Owner == "" {
			var found bool
			var gerr error
			if tv, found, gerr = tenants.Get(workKey(tagViewTenants, a.Subject), tv); gerr != nil {
				return nil, gerr
			}
			if found {
				a.ViewTenants = strings.Split(string(tv), "\x00")
			}
		}
		val = kv.AppendAlias(val[:0], a)
		return val, nil
	}
	var night *kv.Night
	if b.up != nil {
		night = b.up.night()
		if night.Identifiers, err = b.up.droppedIdentifiers(night.Dropped); err != nil {
			return err
		}
	}
	return b.out.WriteAliases(night, &sortedScratch{it: it, value: value})
}

// writeSources writes every source with its operator.
func (b *builder) writeSources() error {
	entries := make([]kv.Entry, 0, len(b.cat.sourceList))
	for _, s := range b.cat.sourceList {
		d := domain.SourceDescriptor{Source: *s}
		if s.OperatorPartyID != nil {
			if p := b.parties[*s.OperatorPartyID]; p != nil {
				d.Operator = &domain.Operator{ID: p.ID, Name: p.Name}
			}
		}
		j, err := domain.Marshal(d)
		if err != nil {
			return err
		}
		entries = append(entries, kv.Entry{Name: s.ID, Value: j})
	}
	return b.out.WriteSources(entries)
}

// writeMeta writes the store's metadata: the cursor key, derived from the
// input digest and the sequence (cursorKey). The build id is the manifest's
// alone: in the store it made every build's bytes differ.
func (b *builder) writeMeta() error {
	return b.out.WriteMeta([]kv.Entry{{Name: kv.MetaCursorKey, Value: b.cursorKey()}})
}

// cursorKey is SHA-256("pds cursor key", input digest, sequence): the same
// for the same input and sequence, as every byte of the store is. Anyone
// holding the snapshot holds the key, and so does anyone holding its input
// files and sequence, which the API never shows (docs/snapshots.md); random
// bytes would keep it from no one who holds the snapshot either.
func (b *builder) cursorKey() []byte {
	sum := sha256.Sum256(fmt.Appendf(nil, "pds cursor key\x00%s\x00%d", b.digest.String(), b.opts.Sequence))
	return sum[:]
}
