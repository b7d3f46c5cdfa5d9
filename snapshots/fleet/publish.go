package fleet

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/productdata/pds/snapshots"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/productdata/pds/snapshots/trust"
)

// PublishOptions configure Publish.
type PublishOptions struct {
	// Verifier, when set, must vouch for the build (a check before
	// upload; replicas check again). Without Trust, the build must carry a
	// minisign signature either way.
	Verifier snapshots.Verifier
	// Trust, when set, signs the statements that name the build and its
	// deltas (trust/ at the origin), which replicas that trust a root
	// follow; the build then needs no minisign signature.
	Trust *PublishTrust
	// AllowDowngrade publishes a build whose sequence is not above the
	// origin's latest one's.
	AllowDowngrade bool
	// Progress, when set, gets one line per file uploaded.
	Progress io.Writer
	// DeltasFrom are earlier builds (folders) to store a delta from beside
	// the build, for replicas that keep one of them (DeltaBases picks
	// them).
	DeltasFrom []string
}

// PublishTrust are the keys that sign a build's statements, and how long
// its timestamp holds.
type PublishTrust struct {
	Build, Timestamp *trust.Signer
	Validity         time.Duration
}

// Published is what Publish did.
type Published struct {
	BuildID  string
	Sequence int64
	Files    int
	Bytes    int64
	Deltas   []DeltaStats
	// Expires is when the published timestamp stops holding (with Trust).
	Expires time.Time
}

// Publish uploads the signed snapshot in dir to the origin: every file under
// <build_id>/, then the manifest's signature and the manifest, and last, as
// the commit point, the latest pointer naming the build. Until that last
// write, pullers see the previous latest; a half-finished upload is never
// latest. The snapshot is verified against its manifest first.
func Publish(ctx context.Context, dir string, o Origin, opts PublishOptions) (Published, error) {
	var pub Published
	if opts.Verifier != nil {
		if err := snapshots.VerifyStatement(dir, opts.Verifier); err != nil {
			return pub, err
		}
	} else if _, err := os.Stat(filepath.Join(dir, snapshots.SignatureName)); err != nil && opts.Trust == nil {
		return pub, fmt.Errorf("%s is not signed (no %s); sign it first with 'pds snapshot sign'", dir, snapshots.SignatureName)
	}
	m, err := snapshots.Verify(dir)
	if err != nil {
		return pub, err
	}
	if !validBuildID(m.BuildID) {
		return pub, fmt.Errorf("%s: build id %q cannot name a directory at the origin", dir, m.BuildID)
	}
	pub.BuildID, pub.Sequence = m.BuildID, m.Sequence
	if err := checkOriginOrder(ctx, o, m, opts.AllowDowngrade); err != nil {
		return pub, err
	}
	if opts.Trust != nil {
		if err := trust.CheckSigners(ctx, originStore{o}, opts.Trust.Build, opts.Trust.Timestamp); err != nil {
			return pub, err
		}
	}
	for _, f := range m.Files {
		if err := putFile(ctx, o, m.BuildID+"/"+f.Path, filepath.Join(dir, filepath.FromSlash(f.Path))); err != nil {
			return pub, err
		}
		pub.Files++
		pub.Bytes += f.Size
		if opts.Progress != nil {
			fmt.Fprintf(opts.Progress, "publish: %s/%s/%s (%d bytes)\n", o, m.BuildID, f.Path, f.Size)
		}
	}
	if len(opts.DeltasFrom) > 0 {
		if err := publishDeltas(ctx, dir, o, m, opts, &pub); err != nil {
			return pub, err
		}
	}
	for _, name := range []string{snapshots.SignatureName, snapshots.ManifestName} {
		err := putFile(ctx, o, m.BuildID+"/"+name, filepath.Join(dir, name))
		if err != nil && (name != snapshots.SignatureName || opts.Trust == nil || !errors.Is(err, fs.ErrNotExist)) {
			return pub, err
		}
	}
	if opts.Trust != nil {
		mb, err := os.ReadFile(filepath.Join(dir, snapshots.ManifestName))
		if err != nil {
			return pub, err
		}
		b := trust.Build{ID: m.BuildID, Sequence: m.Sequence, Manifest: mb, Deltas: map[string]trust.File{}}
		for _, d := range pub.Deltas {
			b.Deltas[d.Base] = trust.File{Length: d.Bytes, SHA256: d.SHA256}
		}
		t := opts.Trust
		if pub.Expires, err = trust.Publish(ctx, originStore{o}, b, t.Build, t.Timestamp, t.Validity, now()); err != nil {
			return pub, err
		}
	}
	latest := m.BuildID + "\n"
	if err := o.Put(ctx, LatestName, strings.NewReader(latest), int64(len(latest))); err != nil {
		return pub, err
	}
	return pub, nil
}

// checkOriginOrder refuses to publish a build that is not newer than the
// origin's latest (replicas would refuse it anyway).
func checkOriginOrder(ctx context.Context, o Origin, m snapshots.Manifest, allowDowngrade bool) error {
	id, err := Latest(ctx, o)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if id == m.BuildID {
		return nil // publishing again (after an interrupted upload, say)
	}
	b, err := readSmall(ctx, o, id+"/"+snapshots.ManifestName, maxManifestBytes)
	if err != nil {
		return fmt.Errorf("the origin's latest build %s: %v", id, err)
	}
	cur, err := snapshots.DecodeManifest(b, fmt.Sprintf("%s/%s/%s", o, id, snapshots.ManifestName))
	if err != nil {
		return fmt.Errorf("the origin's latest build: %v", err)
	}
	if !newer(m, cur) && !allowDowngrade {
		return fmt.Errorf("%w: build %s (sequence %d) is not newer than the origin's latest %s (sequence %d); replicas would refuse it. Pass --allow-downgrade to publish it anyway",
			ErrRefused, m.BuildID, m.Sequence, id, cur.Sequence)
	}
	return nil
}

func putFile(ctx context.Context, o Origin, name, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	return o.Put(ctx, name, f, st.Size())
}

// publishDeltas stores the delta from each of opts.DeltasFrom to the build
// (BUILD/deltas/BASE), then their list (BUILD/deltas.json), before the
// manifest and latest pointer: a puller that sees the build sees its deltas.
// A delta larger than half the build is left out: a replica would fetch
// nearly as much by it, and the origin would store it for nothing.
func publishDeltas(ctx context.Context, dir string, o Origin, m snapshots.Manifest, opts PublishOptions, pub *Published) error {
	id := m.BuildID
	list := deltaList{BuildID: id}
	var whole int64
	for _, f := range m.Files {
		whole += f.Size
	}
	for _, base := range opts.DeltasFrom {
		tmp, err := os.CreateTemp("", "pds-publish-delta-*")
		if err != nil {
			return err
		}
		// Publish verified the build. A delta that passes half the build is
		// given up as soon as it does.
		st, err := writeDelta(ctx, tmp, base, dir, m, whole/2, nil, opts.Trust != nil)
		useful := err == nil
		if errors.Is(err, errDeltaTooLarge) {
			err = nil
		}
		if err == nil && useful {
			h := sha256.New()
			if _, err = tmp.Seek(0, io.SeekStart); err == nil {
				_, err = io.Copy(h, tmp)
			}
			st.SHA256 = h.Sum(nil)
			if err == nil {
				_, err = tmp.Seek(0, io.SeekStart)
			}
			if err == nil {
				err = o.Put(ctx, deltaObject(id, st.Base), tmp, st.Bytes)
			}
		}
		tmp.Close()
		os.Remove(tmp.Name())
		if err != nil {
			return fmt.Errorf("delta from %s: %w", base, err)
		}
		if !useful {
			if opts.Progress != nil {
				fmt.Fprintf(opts.Progress, "publish: no delta from %s: it passed half the build's %d bytes\n", st.Base, whole)
			}
			continue
		}
		pub.Deltas = append(pub.Deltas, st)
		list.Deltas = append(list.Deltas, deltaEntry{Base: st.Base, Size: st.Bytes})
		if opts.Progress != nil {
			fmt.Fprintf(opts.Progress, "publish: %s/%s (%d bytes: %d files the same, %d patched, %d whole)\n",
				o, deltaObject(id, st.Base), st.Bytes, st.Same, st.Patched, st.Whole)
		}
	}
	b, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return err
	}
	return o.Put(ctx, id+"/"+DeltasName, bytes.NewReader(b), int64(len(b)))
}

// DeltaBases returns the folders of the (at most) k newest builds under
// dir that are older than target: what publish makes deltas from. dir is a
// folder of builds, such as a 'pds snapshot pull' folder or the folder
// nightly builds are written to; a symbolic link in it to a build counts as
// that build (once, however many links name it). What looks like a build
// but cannot be used (a link to nowhere, a manifest that does not read) is
// listed in skipped with the reason, so that the caller can say so.
func DeltaBases(dir string, target snapshots.Manifest, k int) (bases, skipped []string, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	var builds []Build
	seen := map[string]bool{target.BuildID: true}
	for _, e := range entries {
		if !validBuildID(e.Name()) {
			continue // not a build's name: current, a build's records, a staging folder
		}
		path := filepath.Join(dir, e.Name())
		st, err := os.Stat(path)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("%s: %v", path, err))
			continue
		}
		if !st.IsDir() {
			continue
		}
		if _, err := os.Lstat(filepath.Join(path, snapshots.ManifestName)); errors.Is(err, fs.ErrNotExist) {
			continue // a folder, not a build
		}
		m, err := snapshots.ReadManifest(path)
		if err != nil {
			skipped = append(skipped, err.Error())
			continue
		}
		if !seen[m.BuildID] && newer(target, m) {
			seen[m.BuildID] = true
			builds = append(builds, Build{ID: m.BuildID, Dir: path, Manifest: m})
		}
	}
	sort.Slice(builds, func(i, j int) bool { return newer(builds[i].Manifest, builds[j].Manifest) })
	for _, b := range builds[:min(k, len(builds))] {
		bases = append(bases, b.Dir)
	}
	return bases, skipped, nil
}
