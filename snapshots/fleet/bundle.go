package fleet

import (
	"context"
	"errors"
	"fmt"
	"github.com/productdata/pds/snapshots"
	"os"
	"path/filepath"
	"slices"
)

// WriteBundle writes to out the delta from the build in fromDir to the
// signed build in toDir (see deltas.go): one file to carry to a site that
// keeps fromDir's build and cannot reach the origin. The file is written
// beside out and renamed when whole.
func WriteBundle(ctx context.Context, fromDir, toDir, out string) (DeltaStats, error) {
	tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".partial-*")
	if err != nil {
		return DeltaStats{}, err
	}
	defer os.Remove(tmp.Name())
	st, err := WriteDelta(ctx, tmp, fromDir, toDir)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), out)
	}
	return st, err
}

// ApplyBundle makes the bundle's build current in snapshots, as a pull
// would have: it checks the signature of the build's manifest with
// opts.PublicKey, refuses a build that is not newer than the current one
// (unless opts.AllowDowngrade) or was rolled back from, applies the delta
// to the build it starts from (which snapshots must keep) in a staging
// folder, hashing every file against the signed manifest, then self-tests,
// activates and prunes. A bundle that fails any check changes nothing.
func ApplyBundle(ctx context.Context, file, snaps string, opts PullOptions) (p Pulled, err error) {
	if opts.PublicKey == nil {
		return p, errors.New("a public key is required to apply a bundle (--pubkey)")
	}
	f, err := os.Open(file)
	if err != nil {
		return p, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return p, err
	}
	d, err := openDelta(f, file)
	if err != nil {
		return p, err
	}
	if err := opts.PublicKey.CheckSignature(d.mb, d.sig); err != nil {
		return p, fmt.Errorf("%w: %s: %w", ErrRefused, file, err)
	}
	m, err := snapshots.DecodeManifest(d.mb, file+": "+snapshots.ManifestName)
	if err != nil {
		return p, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	if err := m.CheckPaths(); err != nil {
		return p, fmt.Errorf("%w: %s: %w", ErrRefused, file, err)
	}
	if !validBuildID(m.BuildID) || m.BuildID != d.header.Target {
		return p, fmt.Errorf("%w: %s: its manifest names build %q and its delta leads to %q", ErrRefused, file, m.BuildID, d.header.Target)
	}
	p.ID, p.Manifest = m.BuildID, m
	lock, upToDate, err := lockToTake(ctx, snaps, m, opts, &p)
	if err != nil || upToDate {
		return p, err
	}
	defer func() { lock.unlock(err != nil) }()
	kept, err := Builds(snaps)
	if err != nil {
		return p, err
	}
	i := slices.IndexFunc(kept, func(b Build) bool { return b.ID == d.header.Base })
	if i < 0 {
		var ids []string
		for _, b := range kept {
			ids = append(ids, b.ID)
		}
		return p, fmt.Errorf("%w: %s starts from build %s, which %s does not keep (it keeps %v); make a bundle from one of those",
			ErrRefused, file, d.header.Base, snaps, ids)
	}
	base := kept[i]
	p.Dir = filepath.Join(snaps, m.BuildID)
	placed, err := checkPlaced(snaps, m.BuildID, opts.PublicKey)
	if err != nil {
		return p, err
	}
	if !placed {
		removeStaleStaging(snaps, m.BuildID)
		staging := filepath.Join(snaps, stagingPre+m.BuildID+deltaStagingSuffix)
		err := stageBuild(snaps, staging, m, d.mb, d.sig, false, func() error {
			return d.applyInto(ctx, base, staging, m, opts.FreeBytes, "nothing was changed", file)
		})
		if err != nil {
			return p, err
		}
		p.Via, p.DeltaBase, p.Downloaded = ViaDelta, base.ID, st.Size()
	}
	return p, selfTestAndActivate(ctx, snaps, m.BuildID, opts, &p)
}
