package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/productdata/pds/snapshots"
	"github.com/productdata/pds/snapshots/trust"
	"io"
	"path/filepath"
	"sync/atomic"
)

// Ways a build arrived (Pulled.Via).
const (
	ViaDelta = "delta"
	ViaFull  = "full"
)

// stageDelta tries to make snapshots/<id> from a delta: it reads the
// build's list of deltas, picks the smallest from a build kept here (if it
// is smaller than the build), and applies it in its own staging folder
// (stageBuild), renamed into place only when every file matched the signed
// manifest mb. Any error leaves nothing behind; errNoDelta says there was
// nothing to try.
func stageDelta(ctx context.Context, o Origin, snaps string, mb []byte, sig statement, m snapshots.Manifest, opts PullOptions, p *Pulled) error {
	list, err := offeredDeltas(ctx, o, m.BuildID, opts.release)
	if err != nil {
		return err
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
	name := deltaObject(m.BuildID, base.ID)
	where := fmt.Sprintf("%s/%s", o, name)
	staging := filepath.Join(snaps, stagingPre+m.BuildID+deltaStagingSuffix)
	var fetched int64
	err = stageBuild(snaps, staging, m, mb, sig, false, func() error {
		rc, err := o.Open(ctx, name, 0)
		if err != nil {
			return err
		}
		defer rc.Close()
		cr := &countReader{r: rc}
		defer func() { fetched = cr.n.Load() }()
		var r io.Reader = cr
		var named *namedDelta
		if opts.release != nil {
			named = newNamedDelta(cr, opts.release.Deltas[base.ID])
			r = named
		}
		d, err := openDelta(r, where)
		if err != nil {
			return err
		}
		if string(d.mb) != string(mb) {
			return fmt.Errorf("%w: %s carries another manifest than %s/%s/%s", ErrRefused, where, o, m.BuildID, snapshots.ManifestName)
		}
		if err := d.applyInto(ctx, base, staging, m, opts.FreeBytes, "nothing was fetched", where); err != nil {
			return err
		}
		if named != nil {
			return named.check(where)
		}
		return nil
	})
	p.Downloaded += fetched
	if err != nil {
		return err
	}
	p.Via, p.DeltaBase = ViaDelta, base.ID
	return nil
}

// applyInto makes staging hold the target m from the kept build base (apply)
// once checkDeltaFits finds room for what it writes; done says what was done
// (nothing) when it refuses.
func (d *openedDelta) applyInto(ctx context.Context, base Build, staging string, m snapshots.Manifest, free func(string) (uint64, error), done, where string) error {
	if err := checkDeltaFits(staging, m, d.header, free, done); err != nil {
		return err
	}
	_, err := d.apply(ctx, base, staging, m, where)
	return err
}

// checkDeltaFits refuses a delta whose build does not fit on the disk: what
// it writes must, the files it makes and the ones it copies from the kept
// build; the store tables and point index files it links from the kept
// build take no room. done
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

// offeredDeltas lists the deltas to build id: those the trust statements
// name (rel), or else the build's deltas.json. errNoDelta when there are
// none.
func offeredDeltas(ctx context.Context, o Origin, id string, rel *trust.Release) (deltaList, error) {
	list := deltaList{BuildID: id}
	if rel != nil {
		for base, f := range rel.Deltas {
			list.Deltas = append(list.Deltas, deltaEntry{Base: base, Size: f.Length})
		}
		if len(list.Deltas) == 0 {
			return list, errNoDelta
		}
		return list, nil
	}
	lb, err := readSmall(ctx, o, id+"/"+DeltasName, maxManifestBytes)
	if errors.Is(err, ErrNotFound) {
		return list, errNoDelta
	}
	if err != nil {
		return list, err
	}
	if err := json.Unmarshal(lb, &list); err != nil {
		return list, fmt.Errorf("%s/%s/%s: %v", o, id, DeltasName, err)
	}
	return list, nil
}
