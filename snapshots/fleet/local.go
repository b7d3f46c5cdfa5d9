package fleet

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"github.com/productdata/pds/snapshots"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/productdata/pds/internal/osfile"
)

// A snapshots directory (what --snapshots and --into name) holds:
//
//	SNAPSHOTS/<build_id>/     whole, verified builds (the last --keep of them)
//	SNAPSHOTS/current         symbolic link to the one served
//	SNAPSHOTS/.staging-<id>/  a pull in progress (never served)
//	SNAPSHOTS/.trash-<id>/    a refused build being removed (discard)
//	SNAPSHOTS/refused         builds rolled back from, one id a line: not pulled again
//	SNAPSHOTS/.lock           held by a pull, a follower's poll or a rollback (lock.go)
const (
	CurrentName = "current"
	RefusedName = "refused"
	stagingPre  = ".staging-"
	trashPre    = ".trash-"
)

// validBuildID reports whether id can name a directory and an origin prefix:
// a ULID or another plain name, never a path.
func validBuildID(id string) bool {
	if id == "" || len(id) > 64 || id == CurrentName || id == RefusedName {
		return false
	}
	for _, r := range id {
		if !(r >= '0' && r <= '9' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// Build is one build kept in a snapshots directory.
type Build struct {
	ID       string
	Dir      string
	Manifest snapshots.Manifest
}

// Current returns the build SNAPSHOTS/current points at; ok is false when
// there is no current link yet.
func Current(snaps string) (b Build, ok bool, err error) {
	link := filepath.Join(snaps, CurrentName)
	target, err := os.Readlink(link)
	if errors.Is(err, fs.ErrNotExist) {
		return b, false, nil
	}
	if err != nil {
		return b, false, fmt.Errorf("%s: %v", link, err)
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(snaps, target)
	}
	m, err := snapshots.ReadManifest(target)
	if err != nil {
		return b, false, err
	}
	return Build{ID: filepath.Base(target), Dir: target, Manifest: m}, true, nil
}

// Builds lists the builds kept in snapshots, newest (highest sequence, then
// build id) first.
func Builds(snaps string) ([]Build, error) {
	entries, err := os.ReadDir(snaps)
	if err != nil {
		return nil, err
	}
	var out []Build
	for _, e := range entries {
		if !e.IsDir() || !validBuildID(e.Name()) {
			continue
		}
		dir := filepath.Join(snaps, e.Name())
		m, err := snapshots.ReadManifest(dir)
		if err != nil {
			continue // not a build: left alone
		}
		out = append(out, Build{ID: e.Name(), Dir: dir, Manifest: m})
	}
	sort.Slice(out, func(i, j int) bool { return newer(out[i].Manifest, out[j].Manifest) })
	return out, nil
}

// newer reports whether a is a later build than b: a higher sequence, or the
// same sequence and a greater build id (ULIDs sort by build time).
func newer(a, b snapshots.Manifest) bool {
	if a.Sequence != b.Sequence {
		return a.Sequence > b.Sequence
	}
	return a.BuildID > b.BuildID
}

// Activate points SNAPSHOTS/current at SNAPSHOTS/<id>: a new relative link
// is made beside it and renamed over it, so a reader sees the old or the new
// target and never neither.
func Activate(snaps, id string) error {
	if !validBuildID(id) {
		return fmt.Errorf("%q is not a build id", id)
	}
	if _, err := os.Stat(filepath.Join(snaps, id, snapshots.ManifestName)); err != nil {
		return fmt.Errorf("build %s is not in %s", id, snaps)
	}
	tmp := filepath.Join(snaps, "."+CurrentName+".tmp-"+id)
	os.Remove(tmp)
	if err := os.Symlink(id, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(snaps, CurrentName)); err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(snaps)
}

// MinKeep is the fewest builds Prune keeps: the current one and the one
// before it, which pds serve may still be reading until it notices the
// changed link and swaps.
const MinKeep = 2

// Prune keeps the current build and the newest others up to keep builds in
// all (at least MinKeep), and removes the rest, and what is left of builds
// removed before (discard). It returns the ids removed.
func Prune(snaps string, keep int) ([]string, error) {
	keep = max(keep, MinKeep)
	removeTrash(snaps)
	builds, err := Builds(snaps)
	if err != nil {
		return nil, err
	}
	cur, _, err := Current(snaps)
	if err != nil {
		return nil, err
	}
	kept := 0
	if cur.ID != "" {
		kept = 1
	}
	var removed []string
	for _, b := range builds {
		if b.ID == cur.ID {
			continue
		}
		if kept < keep {
			kept++
			continue
		}
		if err := os.RemoveAll(b.Dir); err != nil {
			return removed, err
		}
		os.Remove(arrivalPath(snaps, b.ID))
		removed = append(removed, b.ID)
	}
	return removed, nil
}

// removeTrash removes what is left of builds removed before (discard).
func removeTrash(snaps string) {
	entries, _ := os.ReadDir(snaps)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), trashPre) {
			os.RemoveAll(filepath.Join(snaps, e.Name()))
		}
	}
}

// RollbackOptions configure Rollback.
type RollbackOptions struct {
	// Verifier, when set, must vouch for the build rolled to.
	Verifier snapshots.Verifier
	// LockWait and Progress are as for Pull: how long to wait for another
	// pull, follow or rollback in the directory, and where to say so.
	LockWait time.Duration
	Progress io.Writer
}

// Rolled is what Rollback did.
type Rolled struct {
	From, To Build
	// Listed is true when From was written to the refused list.
	Listed bool
	// Skipped are the kept builds a step back passed over, newest first.
	Skipped []Skipped
}

// Skipped is a kept build Rollback did not take, and why.
type Skipped struct {
	ID, Reason string
}

// Rollback points current at another kept build, holding the directory's
// lock. The build made current is never one listed in SNAPSHOTS/refused and
// always passes the self-test a pull runs (SelfTest: the signature when
// opts.Verifier is set, every checksum, open and answer), so the refused
// list never names the build served.
//
// With id empty it steps back: to the newest kept build older than the
// current one that is not refused and passes the self-test; the builds
// passed over are returned in Skipped with their reasons.
//
// With an id it goes to that kept build, older or newer than the current
// one; a refused build or one that fails the self-test is refused, and
// current stays.
//
// Going back to an older build writes the build left to SNAPSHOTS/refused,
// so that no pull or follower takes it again (a later build is taken as
// usual). Going forward to a newer build lists nothing: the build left is
// older, and pulls take only builds newer than the current one anyway.
func Rollback(ctx context.Context, snaps, id string, opts RollbackOptions) (r Rolled, err error) {
	lock, err := lockFolder(ctx, snaps, false, opts.LockWait, opts.Progress)
	if err != nil {
		return r, err
	}
	defer lock.unlock(false)
	cur, ok, err := Current(snaps)
	if err != nil {
		return r, err
	}
	if !ok {
		return r, fmt.Errorf("%s has no %s build to roll back from", snaps, CurrentName)
	}
	r.From = cur
	refused, err := Refused(snaps)
	if err != nil {
		return r, err
	}
	if id == "" {
		r.To, r.Skipped, err = stepBack(ctx, snaps, cur, refused, opts.Verifier)
	} else {
		r.To, err = rollTo(ctx, snaps, cur, id, refused, opts.Verifier)
	}
	if err != nil {
		return r, err
	}
	if newer(cur.Manifest, r.To.Manifest) {
		if r.Listed, err = addRefused(snaps, cur.ID); err != nil {
			return r, err
		}
	}
	if err := Activate(snaps, r.To.ID); err != nil {
		if r.Listed {
			if uerr := removeRefused(snaps, cur.ID); uerr != nil {
				return r, fmt.Errorf("%v; and build %s stays listed in %s: %v", err, cur.ID, filepath.Join(snaps, RefusedName), uerr)
			}
			r.Listed = false
		}
		return r, err
	}
	return r, nil
}

// stepBack finds the newest kept build older than cur that is not refused
// and passes the self-test.
func stepBack(ctx context.Context, snaps string, cur Build, refused []string, pub snapshots.Verifier) (Build, []Skipped, error) {
	builds, err := Builds(snaps)
	if err != nil {
		return Build{}, nil, err
	}
	var skipped []Skipped
	for _, b := range builds {
		if !newer(cur.Manifest, b.Manifest) {
			continue
		}
		if slices.Contains(refused, b.ID) {
			skipped = append(skipped, Skipped{b.ID, "listed in " + filepath.Join(snaps, RefusedName)})
			continue
		}
		if err := snapshots.SelfTest(ctx, b.Dir, rollbackTest(pub)); err != nil {
			if ctx.Err() != nil {
				return Build{}, skipped, ctx.Err()
			}
			if selfTestFault(err, snaps) {
				// Not the build's fault: passing over it would roll
				// further back than asked.
				return Build{}, skipped, hostFailed(b.ID, err, "and current stays "+cur.ID+": roll back again once this host has recovered")
			}
			skipped = append(skipped, Skipped{b.ID, "fails the self-test: " + err.Error()})
			continue
		}
		return b, skipped, nil
	}
	if len(skipped) == 0 {
		return Build{}, nil, fmt.Errorf("%s keeps no build older than the current %s", snaps, cur.ID)
	}
	reasons := make([]string, len(skipped))
	for i, s := range skipped {
		reasons[i] = s.ID + ": " + s.Reason
	}
	return Build{}, skipped, fmt.Errorf("%w: no build kept in %s older than the current %s can serve (%s); current stays",
		ErrRefused, snaps, cur.ID, strings.Join(reasons, "; "))
}

// rollTo checks kept build id for a rollback to it.
func rollTo(ctx context.Context, snaps string, cur Build, id string, refused []string, pub snapshots.Verifier) (Build, error) {
	if !validBuildID(id) {
		return Build{}, fmt.Errorf("%q is not a build id", id)
	}
	if id == cur.ID {
		return Build{}, fmt.Errorf("build %s is already the current one", id)
	}
	dir := filepath.Join(snaps, id)
	if !dirExists(dir) {
		return Build{}, fmt.Errorf("build %s is not kept in %s", id, snaps)
	}
	if slices.Contains(refused, id) {
		return Build{}, fmt.Errorf("%w: build %s is listed in %s (it was rolled back from); remove its line from that file to allow it again; current stays %s",
			ErrRefused, id, filepath.Join(snaps, RefusedName), cur.ID)
	}
	m, err := snapshots.ReadManifest(dir)
	if err == nil {
		err = snapshots.SelfTest(ctx, dir, rollbackTest(pub))
	}
	if err != nil {
		if ctx.Err() != nil {
			return Build{}, ctx.Err()
		}
		if selfTestFault(err, snaps) {
			return Build{}, hostFailed(id, err, "and current stays "+cur.ID+": roll back again once this host has recovered")
		}
		return Build{}, fmt.Errorf("%w: build %s fails the self-test a pull runs: %w; current stays %s", ErrRefused, id, err, cur.ID)
	}
	return Build{ID: id, Dir: dir, Manifest: m}, nil
}

// rollbackTest is how Rollback opens a kept build for its self-test: every
// file hashed whole, since a build kept on disk may have been damaged since
// it was pulled, in parts a lazy open would not read.
func rollbackTest(pub snapshots.Verifier) snapshots.OpenOptions {
	return snapshots.OpenOptions{CacheBytes: selfTestCache, Verifier: pub, HashAll: true}
}

func dirExists(dir string) bool {
	st, err := os.Stat(dir)
	return err == nil && st.IsDir()
}

// Refused lists the build ids in SNAPSHOTS/refused.
func Refused(snaps string) ([]string, error) {
	f, err := os.Open(filepath.Join(snaps, RefusedName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ids []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if id := strings.TrimSpace(sc.Text()); id != "" && !strings.HasPrefix(id, "#") {
			ids = append(ids, id)
		}
	}
	return ids, sc.Err()
}

// addRefused appends id to SNAPSHOTS/refused unless it is listed; listed
// says whether it wrote it.
func addRefused(snaps, id string) (listed bool, err error) {
	ids, err := Refused(snaps)
	if err != nil || slices.Contains(ids, id) {
		return false, err
	}
	f, err := os.OpenFile(filepath.Join(snaps, RefusedName), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return false, err
	}
	if _, err := fmt.Fprintln(f, id); err != nil {
		f.Close()
		return false, err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return false, err
	}
	return true, f.Close()
}

// removeRefused takes the lines naming id out of SNAPSHOTS/refused, keeping
// every other line as written.
func removeRefused(snaps, id string) error {
	path := filepath.Join(snaps, RefusedName)
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var keep []string
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if strings.TrimSpace(line) != id {
			keep = append(keep, line)
		}
	}
	tmp := path + ".tmp"
	if err := writeSynced(tmp, []byte(strings.Join(keep, ""))); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(snaps)
}

// syncDir makes the names in dir durable (where the platform can: see
// osfile.SyncPath).
func syncDir(dir string) error {
	return osfile.SyncPath(dir)
}
