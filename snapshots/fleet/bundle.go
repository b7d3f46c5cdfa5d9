package fleet

import (
	"context"
	"errors"
	"fmt"
	"github.com/productdata/pds/snapshots"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/productdata/pds/snapshots/trust"
)

// BundleTrust is what a bundle for a site that trusts a root carries: the
// chain of roots (version 1 on), and the keys that sign the build's
// statements. Validity is the bundle's own window: the site reports its
// data stale once it passes without a newer bundle.
type BundleTrust struct {
	Roots            [][]byte
	Build, Timestamp *trust.Signer
	Validity         time.Duration
	// LegacySig, when set, is the old minisign key's signature of the
	// first root: a site that trusts that key adopts the root from the
	// bundle, as a replica does from an origin.
	LegacySig []byte
}

// WriteBundle writes to out the delta from the build in fromDir to the
// signed build in toDir (see deltas.go): one file to carry to a site that
// keeps fromDir's build and cannot reach the origin. With bt set, the
// bundle carries the trust statements that name the build (a site that
// trusts a root needs them; the build needs no minisign signature then).
// The file is written beside out and renamed when whole.
func WriteBundle(ctx context.Context, fromDir, toDir, out string, bt *BundleTrust) (DeltaStats, error) {
	target, err := snapshots.VerifyContext(ctx, toDir)
	if err != nil {
		return DeltaStats{}, err
	}
	var stmts trust.Files
	if bt != nil {
		mb, err := os.ReadFile(filepath.Join(toDir, snapshots.ManifestName))
		if err != nil {
			return DeltaStats{}, err
		}
		stmts = trust.Files{}
		b := trust.Build{ID: target.BuildID, Sequence: target.Sequence, Manifest: mb}
		if _, err := trust.Bundle(ctx, stmts, bt.Roots, b, bt.Build, bt.Timestamp, bt.Validity, now()); err != nil {
			return DeltaStats{}, err
		}
		if bt.LegacySig != nil {
			stmts[trust.AdoptedSigName] = bt.LegacySig
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".partial-*")
	if err != nil {
		return DeltaStats{}, err
	}
	defer os.Remove(tmp.Name())
	st, err := writeDelta(ctx, tmp, fromDir, toDir, target, 0, stmts, bt != nil)
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
// opts.Verifier (a trust root checks the statements the bundle carries,
// walking any new roots among them), refuses a build that is not newer than the current one
// (unless opts.AllowDowngrade) or was rolled back from, applies the delta
// to the build it starts from (which snapshots must keep) in a staging
// folder, hashing every file against the signed manifest, then self-tests,
// activates and prunes. A bundle that fails any check changes nothing.
func ApplyBundle(ctx context.Context, file, snaps string, opts PullOptions) (p Pulled, err error) {
	if opts.Verifier == nil {
		return p, errors.New("a trust root (--trust-root) or a public key (--pubkey) is required to apply a bundle")
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
	sig, rel, err := bundleStatement(ctx, file, snaps, d, &opts)
	if err != nil {
		return p, err
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
		if err == nil {
			err = refreshStatement(filepath.Join(snaps, m.BuildID), rel)
		}
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
	placed, err := checkPlaced(snaps, m.BuildID, opts.Verifier)
	if err != nil {
		return p, err
	}
	if !placed {
		removeStaleStaging(snaps, m.BuildID)
		staging := filepath.Join(snaps, stagingPre+m.BuildID+deltaStagingSuffix)
		err := stageBuild(snaps, staging, m, d.mb, sig, false, func() error {
			return d.applyInto(ctx, base, staging, m, opts.FreeBytes, "nothing was changed", file)
		})
		if err != nil {
			return p, err
		}
		p.Via, p.DeltaBase, p.Downloaded = ViaDelta, base.ID, st.Size()
	}
	return p, selfTestAndActivate(ctx, snaps, m.BuildID, opts, &p)
}

// bundleStatement checks the bundle's build against what the site trusts
// and answers the statement the build keeps: with a trust root, the
// statements the bundle carries must name its manifest (a root the site
// adopted from its minisign key counts); with a minisign key, the
// bundle's signature must be the key's.
func bundleStatement(ctx context.Context, file, snaps string, d *openedDelta, opts *PullOptions) (statement, *trust.Release, error) {
	if err := adoptedTrust(snaps, opts); err != nil {
		return statement{}, nil, err
	}
	if key, ok := opts.Verifier.(*snapshots.PublicKey); ok {
		err := key.Check(d.mb, d.sig)
		if err == nil {
			return statement{name: key.Statement(), b: d.sig}, nil, nil
		}
		sig, offered := d.stmts[trust.AdoptedSigName]
		if !offered {
			return statement{}, nil, fmt.Errorf("%w: %w: %s: %w", ErrRefused, snapshots.ErrSignature, file, err)
		}
		r, aerr := trust.Adopt(snaps, d.stmts[trust.AdoptedName], sig, key)
		if aerr != nil {
			return statement{}, nil, fmt.Errorf("%w: %w: %s: %w; and its root could not be adopted: %w", ErrRefused, snapshots.ErrSignature, file, err, aerr)
		}
		opts.Verifier = r
	}
	r, ok := opts.Verifier.(*trust.Replica)
	if !ok {
		if err := opts.Verifier.Check(d.mb, d.sig); err != nil {
			return statement{}, nil, fmt.Errorf("%w: %w: %s: %w", ErrRefused, snapshots.ErrSignature, file, err)
		}
		return statement{name: opts.Verifier.Statement(), b: d.sig}, nil, nil
	}
	if d.stmts == nil {
		return statement{}, nil, fmt.Errorf("%w: %s carries no trust statements, and this site trusts a root: make the bundle with 'pds snapshot bundle --key'", ErrRefused, file)
	}
	rel, err := r.Update(ctx, d.stmts.Fetch, now())
	if err != nil {
		return statement{}, nil, fmt.Errorf("%w: %s: %w", ErrRefused, file, err)
	}
	if rel.BuildID != d.header.Target {
		return statement{}, nil, fmt.Errorf("%w: %s: its statements name build %s, and its delta leads to %s", ErrRefused, file, rel.BuildID, d.header.Target)
	}
	if err := rel.Manifest.Check(file+": "+snapshots.ManifestName, d.mb); err != nil {
		return statement{}, nil, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	return statement{name: snapshots.StatementName, b: rel.Statement}, &rel, nil
}
