package fleet

import (
	"context"
	"errors"
	"fmt"
	"github.com/productdata/pds/snapshots"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/productdata/pds/internal/osfile"
	"github.com/productdata/pds/snapshots/trust"
)

// maxManifestBytes bounds what is read of a manifest or signature.
const maxManifestBytes = 64 << 20

// PullOptions configure Pull and Fetch.
type PullOptions struct {
	// Verifier must vouch for the build's manifest: a trust root
	// (*trust.Replica: the build is the one the origin's newest valid
	// statements name) or a minisign key (the build is the one the
	// origin's latest pointer names, signed by the key). Required.
	Verifier snapshots.Verifier
	// AllowDowngrade takes a build whose sequence is not above the current
	// one's.
	AllowDowngrade bool
	// Keep is how many builds Pull leaves, the current one included (at
	// least MinKeep).
	Keep int
	// LockWait is how long to wait while another pull, follow or rollback
	// holds the snapshots directory's lock; after it, ErrLocked. Zero fails
	// at once.
	LockWait time.Duration
	// FreeBytes reports the free space of the snapshots directory's file
	// system (default: statfs). Tests inject a small one.
	FreeBytes func(dir string) (uint64, error)
	// Progress, when set, gets a line about once a second while files land,
	// and one if the lock is held by another.
	Progress io.Writer
	// NoDelta fetches a new build whole even where the origin holds a
	// delta to it from a build kept here.
	NoDelta bool

	// release is the build the trust root's statements name, when the
	// build is taken through one.
	release *trust.Release
}

// Pulled is what Pull or Fetch did.
type Pulled struct {
	Build
	UpToDate   bool  // the origin's latest build is the current one; nothing fetched
	Downloaded int64 // bytes transferred from the origin
	Reused     int64 // bytes found already staged by an interrupted pull
	// Objects is how many objects were read from the origin (the latest
	// pointer, manifest and signature included).
	Objects int64
	// Via says how the build came: ViaDelta (a delta from the kept build
	// DeltaBase) or ViaFull; "" when nothing was fetched.
	Via       string
	DeltaBase string
	// DeltaErr says why a delta the origin offered was not used, when the
	// build then came whole.
	DeltaErr error
	// Removed are the old builds Pull pruned; PruneErr says why pruning
	// stopped, if it did (the new build is current all the same).
	Removed  []string
	PruneErr error
}

// selfTestCache is the block cache of a self-test's store: it reads a few
// blocks.
const selfTestCache = 8 << 20

// LatestName is the origin's pointer to the newest published build: a small
// text object holding its build id.
const LatestName = "latest"

// Latest reads the build id the origin's latest pointer names.
func Latest(ctx context.Context, o Origin) (string, error) {
	b, err := readSmall(ctx, o, LatestName, 1024)
	if err != nil {
		return "", err
	}
	id := strings.TrimSpace(string(b))
	if !validBuildID(id) {
		return "", fmt.Errorf("%s/%s names %q, which is not a build id", o, LatestName, id)
	}
	return id, nil
}

func readSmall(ctx context.Context, o Origin, name string, limit int64) ([]byte, error) {
	rc, err := o.Open(ctx, name, 0)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s/%s: %v", o, name, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%w: %s/%s is larger than %d bytes", ErrRefused, o, name, limit)
	}
	return b, nil
}

// Pull makes the origin's latest build current in snapshots, as 'pds
// snapshot pull' does. Holding the directory's lock (LockName), it fetches
// the build (see Fetch), opens it and answers the self-test (SelfTest),
// points current at it (Activate) and prunes old builds (Prune). A build
// that fails its self-test is removed, so that no rollback can pick it
// later; one whose test failed for a fault of this host (hostFault) is
// kept, and the next pull tests it again. A pull that fails leaves the
// directory as it was (one that it had to make is removed again), but for
// the staging directory of an interrupted download, which the next pull
// resumes, and the lock file.
func Pull(ctx context.Context, o Origin, snaps string, opts PullOptions) (Pulled, error) {
	return pullLatest(ctx, o, snaps, opts, true)
}

// Fetch brings the origin's latest build into snapshots/<build_id>, whole
// and verified, without touching current: it reads the latest pointer, the
// manifest and its signature (checked with opts.PublicKey), refuses a build
// not newer than the current one (unless opts.AllowDowngrade) or rolled back
// from, checks free space, then streams each file into
// snapshots/.staging-<build_id>/, hashing it as it lands, and renames the
// staging directory into place when every file matches. An interrupted
// Fetch leaves the staging directory; the next one keeps each whole file
// whose checksum matches and resumes a partial one from where it stopped.
// It holds the directory's lock from its first write to its last.
func Fetch(ctx context.Context, o Origin, snaps string, opts PullOptions) (Pulled, error) {
	return pullLatest(ctx, o, snaps, opts, false)
}

func pullLatest(ctx context.Context, o Origin, snaps string, opts PullOptions, activate bool) (Pulled, error) {
	co := &countingOrigin{Origin: o}
	p, err := takeLatest(ctx, co, snaps, &opts, activate)
	p.Objects = co.n.Load()
	return p, err
}

// takeLatest fetches the build the origin offers (latestBuild) and, with
// activate, makes it current. A folder that adopted a root its minisign
// key signed takes builds through that root (adoptedTrust); a replica
// whose minisign key did not sign the build
// adopts the root the origin offers, if the key signed that, and takes the
// build through it (adoptOnRefusal).
func takeLatest(ctx context.Context, o Origin, snaps string, opts *PullOptions, activate bool) (Pulled, error) {
	if err := adoptedTrust(snaps, opts); err != nil {
		return Pulled{}, err
	}
	id, rel, err := latestBuild(ctx, o, opts)
	if err != nil {
		return Pulled{}, err
	}
	p, err := pullBuild(ctx, o, snaps, id, rel, *opts, activate)
	if adopted, aerr := adoptOnRefusal(ctx, o, snaps, opts, err); aerr != nil {
		return p, fmt.Errorf("%w; and the origin's root could not be adopted: %w", err, aerr)
	} else if adopted {
		if id, rel, err = latestBuild(ctx, o, opts); err != nil {
			return Pulled{}, err
		}
		p, err = pullBuild(ctx, o, snaps, id, rel, *opts, activate)
	}
	return p, err
}

// pullBuild fetches build id and, with activate, self-tests it, makes it
// current and prunes. What writes nothing comes first, without the lock:
// the build is already current, or refused, or not signed by the key; then
// it looks again under the lock, since another pull may have finished
// meanwhile.
func pullBuild(ctx context.Context, o Origin, snaps, id string, rel *trust.Release, opts PullOptions, activate bool) (p Pulled, err error) {
	p.ID = id
	opts.release = rel
	if opts.Verifier == nil {
		return p, errors.New("a trust root (--trust-root) or a public key (--pubkey) is required to pull")
	}
	if cur, ok, err := Current(snaps); err != nil || ok && cur.ID == id {
		p.Build, p.UpToDate = cur, err == nil
		if err == nil {
			err = refreshStatement(filepath.Join(snaps, id), rel)
		}
		return p, err
	}
	if err := checkNotRolledBack(snaps, id); err != nil {
		return p, err
	}
	mb, sig, m, err := readSigned(ctx, o, id, rel, opts.Verifier)
	if err != nil {
		return p, err
	}
	p.Manifest = m
	lock, upToDate, err := lockToTake(ctx, snaps, m, opts, &p)
	if err != nil || upToDate {
		return p, err
	}
	defer func() { lock.unlock(err != nil) }()
	if err := place(ctx, o, snaps, mb, sig, m, opts, &p); err != nil {
		return p, err
	}
	if !activate {
		return p, nil
	}
	if co, ok := o.(*countingOrigin); ok {
		p.Objects = co.n.Load()
	}
	return p, selfTestAndActivate(ctx, snaps, id, opts, &p)
}

// selfTestAndActivate makes the placed build p.Dir current after its
// self-test, and prunes. A build that fails the test is removed, unless
// the failure is this host's (hostFault): then it is kept, verified, and
// the next pull tests it again.
func selfTestAndActivate(ctx context.Context, snaps, id string, opts PullOptions, p *Pulled) error {
	// Every file was hashed as it landed (or whole, for a build pulled
	// before), so the open may check chunks lazily.
	if err := snapshots.SelfTest(ctx, p.Dir, snapshots.OpenOptions{CacheBytes: selfTestCache, Verifier: opts.Verifier}); err != nil {
		if ctx.Err() != nil {
			return ctx.Err() // verified and kept: the next pull tests it again
		}
		if selfTestFault(err, snaps) {
			return hostFailed(id, err, pullAgain)
		}
		if rerr := discard(snaps, id); rerr != nil {
			return fmt.Errorf("%w: %w; removing the build failed (%w): the next pull or prune removes what is left", ErrRefused, err, rerr)
		}
		return fmt.Errorf("%w: %w; the build was removed", ErrRefused, err)
	}
	// Recorded before current names the build, so that a server swapping
	// to it finds the record.
	writeArrival(snaps, p)
	if err := Activate(snaps, id); err != nil {
		return err
	}
	p.Removed, p.PruneErr = Prune(snaps, opts.Keep)
	return nil
}

// lockToTake locks the snapshots folder for taking the build m and checks
// that it may be taken (checkTakeable). When that build is already the
// current one, it says so in p, releases the lock and answers upToDate; on
// an error the lock is released too. Otherwise the caller holds the lock.
func lockToTake(ctx context.Context, snaps string, m snapshots.Manifest, opts PullOptions, p *Pulled) (lock *folderLock, upToDate bool, err error) {
	lock, err = lockFolder(ctx, snaps, true, opts.LockWait, opts.Progress)
	if err != nil {
		return nil, false, err
	}
	cur, upToDate, err := checkTakeable(snaps, m, opts.AllowDowngrade)
	if err != nil || upToDate {
		lock.unlock(err != nil)
		if upToDate {
			p.Build, p.UpToDate = cur, true
		}
		return nil, upToDate, err
	}
	return lock, false, nil
}

// checkTakeable, under the snapshots directory's lock, says whether build m
// may become current there: not if it is current already (upToDate, with
// cur the current build), was rolled back from, or is not newer than the
// current one (unless allowDowngrade).
func checkTakeable(snaps string, m snapshots.Manifest, allowDowngrade bool) (cur Build, upToDate bool, err error) {
	cur, hasCur, err := Current(snaps)
	if err != nil {
		return cur, false, err
	}
	if hasCur && cur.ID == m.BuildID {
		return cur, true, nil
	}
	if err := checkNotRolledBack(snaps, m.BuildID); err != nil {
		return Build{}, false, err
	}
	if hasCur && !newer(m, cur.Manifest) && !allowDowngrade {
		return Build{}, false, fmt.Errorf("%w: build %s (sequence %d) is not newer than the served build %s (sequence %d); pass --allow-downgrade, or use 'pds snapshot rollback' to go back on purpose",
			ErrRefused, m.BuildID, m.Sequence, cur.ID, cur.Manifest.Sequence)
	}
	return Build{}, false, nil
}

// place makes snapshots/<id> hold the build: one pulled before (kept, then
// left by a rollback, or fetched but not activated) is checked again rather
// than fetched again (checkPlaced); otherwise it is staged.
func place(ctx context.Context, o Origin, snaps string, mb []byte, sig statement, m snapshots.Manifest, opts PullOptions, p *Pulled) error {
	if err := refreshStatement(filepath.Join(snaps, m.BuildID), opts.release); err != nil {
		return err
	}
	placed, err := checkPlaced(snaps, m.BuildID, opts.Verifier)
	if err != nil {
		return err
	}
	if !placed {
		if err := stage(ctx, o, snaps, mb, sig, m, opts, p); err != nil {
			return err
		}
	}
	p.Dir = filepath.Join(snaps, m.BuildID)
	return nil
}

func checkNotRolledBack(snaps, id string) error {
	refused, err := Refused(snaps)
	if err != nil {
		return err
	}
	if slices.Contains(refused, id) {
		return fmt.Errorf("%w: build %s was rolled back on this replica (listed in %s); it is not pulled again", ErrRefused, id, filepath.Join(snaps, RefusedName))
	}
	return nil
}

// readSigned reads build id's manifest from the origin and checks it: with
// a trust root, against the release the statements name (rel); with a
// minisign key, against its signature beside it. Then the manifest's own
// sense. The statement is what the build keeps beside its manifest.
func readSigned(ctx context.Context, o Origin, id string, rel *trust.Release, v snapshots.Verifier) (mb []byte, sig statement, m snapshots.Manifest, err error) {
	if rel != nil {
		if mb, err = readSmall(ctx, o, id+"/"+snapshots.ManifestName, rel.Manifest.Length); err != nil {
			return nil, sig, m, err
		}
		if err := rel.Manifest.Check(fmt.Sprintf("%s/%s/%s", o, id, snapshots.ManifestName), mb); err != nil {
			return nil, sig, m, fmt.Errorf("%w: %w", ErrRefused, err)
		}
		sig = statement{name: snapshots.StatementName, b: rel.Statement}
	} else {
		if mb, err = readSmall(ctx, o, id+"/"+snapshots.ManifestName, maxManifestBytes); err != nil {
			return nil, sig, m, err
		}
		b, err := readSmall(ctx, o, id+"/"+v.Statement(), maxManifestBytes)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return nil, sig, m, err
		}
		if err := v.Check(mb, b); err != nil {
			return nil, sig, m, fmt.Errorf("%w: %w: %s/%s: %w", ErrRefused, snapshots.ErrSignature, o, id, err)
		}
		sig = statement{name: v.Statement(), b: b}
	}
	if m, err = snapshots.DecodeManifest(mb, fmt.Sprintf("%s/%s/%s", o, id, snapshots.ManifestName)); err != nil {
		return nil, sig, m, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	if m.BuildID != id {
		return nil, sig, m, fmt.Errorf("%w: %s/%s/%s names build %s", ErrRefused, o, id, snapshots.ManifestName, m.BuildID)
	}
	if err := m.CheckPaths(); err != nil {
		return nil, sig, m, fmt.Errorf("%w: %s/%s: %w", ErrRefused, o, id, err)
	}
	return mb, sig, m, nil
}

// stage makes snapshots/<id> from a delta when the origin has a usable one
// (stageDelta), and otherwise fetches the build's files whole into
// snapshots/.staging-<id>/ (stageBuild), which an interrupted pull leaves
// for the next one to resume.
func stage(ctx context.Context, o Origin, snaps string, mb []byte, sig statement, m snapshots.Manifest, opts PullOptions, p *Pulled) error {
	removeStaleStaging(snaps, m.BuildID)
	if !opts.NoDelta {
		err := stageDelta(ctx, o, snaps, mb, sig, m, opts, p)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(err, ErrNoSpace) {
			return err // the whole build needs more
		}
		if !errors.Is(err, errNoDelta) {
			p.DeltaErr = err
			if opts.Progress != nil {
				fmt.Fprintf(opts.Progress, "pull: the delta to %s failed (%v); fetching the whole build\n", m.BuildID, err)
			}
		}
	}
	p.Via = ViaFull
	staging := filepath.Join(snaps, stagingPre+m.BuildID)
	return stageBuild(snaps, staging, m, mb, sig, true, func() error {
		if err := checkSpace(staging, m, opts.FreeBytes); err != nil {
			return err
		}
		return fetchFiles(ctx, o, staging, m, opts.Progress, p)
	})
}

// discard removes snapshots/<id>, or a folder left at that name: it is
// first renamed to snapshots/.trash-<id>, which needs no file descriptor,
// so that a removal that fails halfway (too many open files, an I/O error)
// leaves no half build under the build's own name, where it would block
// the next pull of the build. The next pull or prune removes what is left.
func discard(snaps, id string) error {
	trash := filepath.Join(snaps, trashPre+id)
	os.RemoveAll(trash)
	if err := os.Rename(filepath.Join(snaps, id), trash); err != nil {
		return err
	}
	return os.RemoveAll(trash)
}

// checkSpace refuses to start when what is left to fetch does not fit, with
// a margin of 1% of the build and at least 16 MiB for the file system.
func checkSpace(staging string, m snapshots.Manifest, free func(string) (uint64, error)) error {
	var need, total int64
	for _, f := range m.Files {
		total += f.Size
		need += f.Size
		if st, err := os.Stat(filepath.Join(staging, filepath.FromSlash(f.Path))); err == nil && st.Size() <= f.Size {
			need -= st.Size()
		}
	}
	return checkFree(staging, m.BuildID, need, total/100, free, "nothing was fetched")
}

// checkFree refuses to start when need bytes, plus a margin of at least 16
// MiB, do not fit in staging's file system; done says what was done
// (nothing) when it refuses.
func checkFree(staging, id string, need, margin int64, free func(string) (uint64, error), done string) error {
	if free == nil {
		free = osfile.FreeBytes
	}
	margin = max(margin, 16<<20)
	avail, err := free(staging)
	if errors.Is(err, errors.ErrUnsupported) {
		return nil // a platform that does not tell: the fetch finds out
	}
	if err != nil {
		return fmt.Errorf("free space of %s: %v", staging, err)
	}
	if uint64(need+margin) > avail {
		return fmt.Errorf("%w: build %s needs %d more bytes (plus a %d-byte margin) in %s, and %d are free; %s",
			ErrNoSpace, id, need, margin, filepath.Dir(staging), avail, done)
	}
	return nil
}

// fetchFiles fetches every file of m into staging, reporting progress.
func fetchFiles(ctx context.Context, o Origin, staging string, m snapshots.Manifest, progress io.Writer, p *Pulled) error {
	var total int64
	for _, f := range m.Files {
		total += f.Size
	}
	var done atomic.Int64
	if progress != nil {
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			t := time.NewTicker(time.Second)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
					fmt.Fprintf(progress, "pull: %s %d of %d bytes (%.0f%%)\n", m.BuildID, done.Load(), total, 100*float64(done.Load())/float64(max(total, 1)))
				}
			}
		}()
	}
	for _, f := range m.Files {
		if err := ctx.Err(); err != nil {
			return err
		}
		got, reused, err := fetchFile(ctx, o, m.BuildID+"/"+f.Path, filepath.Join(staging, filepath.FromSlash(f.Path)), f)
		p.Downloaded += got
		p.Reused += reused
		done.Add(got + reused)
		if err != nil {
			return err
		}
	}
	return nil
}

// fetchFile makes path hold f, streaming from the origin and hashing as it
// writes. A whole staged file with the right checksum is kept; a shorter one
// is hashed and continued from its end (an HTTP Range or S3 ranged GET). A
// file whose bytes end up wrong is removed, so that the next pull restarts
// it. It returns the bytes fetched and the bytes reused.
func fetchFile(ctx context.Context, o Origin, name, path string, f snapshots.File) (got, reused int64, err error) {
	h := f.NewHash() // the algorithm of the manifest's checksum (File)
	var have int64
	staged := false
	if st, err := os.Stat(path); err == nil {
		if st.Size() > f.Size {
			os.Remove(path)
		} else if have, err = hashFile(path, h); err != nil {
			return 0, 0, err
		} else {
			staged = true
		}
	}
	if staged && have == f.Size {
		if f.Matches(h) {
			return 0, have, nil
		}
		os.Remove(path)
		h.Reset()
		have = 0
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return 0, 0, err
	}
	out, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return 0, 0, err
	}
	defer out.Close()
	if err := out.Truncate(have); err != nil {
		return 0, 0, err
	}
	if _, err := out.Seek(have, io.SeekStart); err != nil {
		return 0, 0, err
	}
	rc, err := o.Open(ctx, name, have)
	if err != nil {
		return 0, have, err
	}
	defer rc.Close()
	n, cerr := io.Copy(io.MultiWriter(out, h), io.LimitReader(rc, f.Size-have+1))
	if err := out.Sync(); err != nil {
		return n, have, err
	}
	switch {
	case have+n > f.Size:
		os.Remove(path)
		return n, have, fmt.Errorf("%w: %s/%s is longer than the signed manifest says (%d bytes); it was changed after signing", ErrRefused, o, name, f.Size)
	case have+n < f.Size:
		if cerr == nil {
			cerr = io.ErrUnexpectedEOF
		}
		return n, have, fmt.Errorf("download of %s/%s stopped at %d of %d bytes (%w); pull again to resume", o, name, have+n, f.Size, cerr)
	case !f.Matches(h) && have > 0:
		// The staged part may be what was wrong: fetch it whole next time
		// before calling the build bad.
		os.Remove(path)
		return n, have, fmt.Errorf("%s/%s does not match its checksum after resuming at byte %d; it will be fetched whole on the next pull", o, name, have)
	case !f.Matches(h):
		os.Remove(path)
		return n, have, fmt.Errorf("%w: %s/%s does not match the signed manifest's checksum; it was changed after signing or damaged on the way", ErrRefused, o, name)
	}
	return n, have, nil
}

func hashFile(path string, h io.Writer) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return io.Copy(h, f)
}

func writeSynced(path string, b []byte) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
