package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/productdata/pds/snapshots"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
)

// Ways a build arrived (Pulled.Via).
const (
	ViaDelta = "delta"
	ViaFull  = "full"
)

// errNoDelta: the origin has no delta from a build this replica keeps, or
// none cheaper than the build itself. Not a failure: the pull goes whole.
var errNoDelta = errors.New("no usable delta")

// deltaStagingSuffix names the folder a delta is applied in, beside the
// staging folder of a whole pull (whose partial files a failed delta must
// not lose); removeStaleStaging removes a leftover one.
const deltaStagingSuffix = "-delta"

// stageDelta tries to make snapshots/<id> from a delta: it reads the
// build's list of deltas, picks the smallest from a build kept here (if it
// is smaller than the build), and applies it in its own staging folder,
// renaming that into place only when every file matched the signed
// manifest mb. Any error leaves nothing behind; errNoDelta says there was
// nothing to try.
func stageDelta(ctx context.Context, o Origin, snaps string, mb, sig []byte, m snapshots.Manifest, opts PullOptions, p *Pulled) error {
	lb, err := readSmall(ctx, o, m.BuildID+"/"+DeltasName, maxManifestBytes)
	if errors.Is(err, ErrNotFound) {
		return errNoDelta
	}
	if err != nil {
		return err
	}
	var list deltaList
	if err := json.Unmarshal(lb, &list); err != nil {
		return fmt.Errorf("%s/%s/%s: %v", o, m.BuildID, DeltasName, err)
	}
	kept, err := Builds(snaps)
	if err != nil {
		return err
	}
	byID := map[string]Build{}
	for _, b := range kept {
		byID[b.ID] = b
	}
	var full int64
	for _, f := range m.Files {
		full += f.Size
	}
	var base Build
	best := full
	for _, e := range list.Deltas {
		if b, ok := byID[e.Base]; ok && e.Size < best {
			base, best = b, e.Size
		}
	}
	if base.ID == "" {
		return errNoDelta
	}
	staging := filepath.Join(snaps, stagingPre+m.BuildID+deltaStagingSuffix)
	os.RemoveAll(staging)
	if err := os.MkdirAll(staging, 0o755); err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(staging)
		}
	}()
	name := deltaObject(m.BuildID, base.ID)
	rc, err := o.Open(ctx, name, 0)
	if err != nil {
		return err
	}
	defer rc.Close()
	cr := &countReader{r: rc}
	where := fmt.Sprintf("%s/%s", o, name)
	d, err := openDelta(cr, where)
	if err == nil {
		err = checkDeltaFits(staging, m, d.header, opts.FreeBytes, "nothing was fetched")
	}
	if err == nil && string(d.mb) != string(mb) {
		err = fmt.Errorf("%w: %s carries another manifest than %s/%s/%s", ErrRefused, where, o, m.BuildID, snapshots.ManifestName)
	}
	if err == nil {
		err = writeSynced(filepath.Join(staging, snapshots.ManifestName), mb)
	}
	if err == nil {
		_, err = d.apply(ctx, base, staging, m, where)
	}
	if err == nil {
		err = finishStaging(staging, snaps, m.BuildID, sig)
	}
	p.Downloaded += cr.n.Load()
	if noSpace(err) {
		return filledUp(snaps, m, err)
	}
	if err != nil {
		return err
	}
	ok = true
	p.Via, p.DeltaBase = ViaDelta, base.ID
	return nil
}

// checkDeltaFits refuses a delta whose build does not fit on the disk: what
// it writes must, the files it makes and the ones it copies from the kept
// build; the store tables it links from the kept build take no room. done
// says what was done (nothing) when it refuses.
func checkDeltaFits(staging string, m snapshots.Manifest, h deltaHeader, free func(string) (uint64, error), done string) error {
	how := make(map[string]string, len(h.Files))
	for _, df := range h.Files {
		how[df.Path] = df.How
	}
	var need int64
	for _, f := range m.Files {
		if how[f.Path] == howSame && linkable(f.Path) {
			continue
		}
		need += f.Size
	}
	return checkFree(staging, m.BuildID, need, need/100, free, done)
}

// finishStaging writes the signature into a staging folder whose files all
// matched, and renames it to snapshots/<id>. A folder left at that name
// without a manifest (what a removal that failed halfway may leave) is
// discarded first; the callers take a build whose manifest is there rather
// than stage it.
func finishStaging(staging, snaps, id string, sig []byte) error {
	if err := writeSynced(filepath.Join(staging, snapshots.SignatureName), sig); err != nil {
		return err
	}
	if err := snapshots.SetModes(staging); err != nil {
		return err
	}
	if err := syncDir(staging); err != nil {
		return err
	}
	final := filepath.Join(snaps, id)
	if _, err := os.Lstat(final); err == nil {
		if _, err := os.Lstat(filepath.Join(final, snapshots.ManifestName)); err == nil {
			return fmt.Errorf("%s holds a build already", final)
		}
		if err := discard(snaps, id); err != nil {
			return fmt.Errorf("removing %s, left without a manifest: %w", final, err)
		}
	}
	if err := os.Rename(staging, final); err != nil {
		return err
	}
	return syncDir(snaps)
}

type countReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// countingOrigin counts the objects read from an origin.
type countingOrigin struct {
	Origin
	n atomic.Int64
}

func (c *countingOrigin) Open(ctx context.Context, name string, offset int64) (io.ReadCloser, error) {
	c.n.Add(1)
	return c.Origin.Open(ctx, name, offset)
}
