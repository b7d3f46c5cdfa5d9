package snapshots

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// A snapshots directory (what --snapshots and --into name) holds:
//
//	SNAPSHOTS/<build_id>/     whole, verified builds (the last --keep of them)
//	SNAPSHOTS/current         symbolic link to the one served
//	SNAPSHOTS/.staging-<id>/  a pull in progress (never served)
//	SNAPSHOTS/refused         builds rolled back from, one id a line: not pulled again
const (
	CurrentName = "current"
	RefusedName = "refused"
	stagingPre  = ".staging-"
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
	Manifest Manifest
}

// Current returns the build SNAPSHOTS/current points at; ok is false when
// there is no current link yet.
func Current(snapshots string) (b Build, ok bool, err error) {
	link := filepath.Join(snapshots, CurrentName)
	target, err := os.Readlink(link)
	if errors.Is(err, fs.ErrNotExist) {
		return b, false, nil
	}
	if err != nil {
		return b, false, fmt.Errorf("%s: %v", link, err)
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(snapshots, target)
	}
	m, err := ReadManifest(target)
	if err != nil {
		return b, false, err
	}
	return Build{ID: filepath.Base(target), Dir: target, Manifest: m}, true, nil
}

// Builds lists the builds kept in snapshots, newest (highest sequence, then
// build id) first.
func Builds(snapshots string) ([]Build, error) {
	entries, err := os.ReadDir(snapshots)
	if err != nil {
		return nil, err
	}
	var out []Build
	for _, e := range entries {
		if !e.IsDir() || !validBuildID(e.Name()) {
			continue
		}
		dir := filepath.Join(snapshots, e.Name())
		m, err := ReadManifest(dir)
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
func newer(a, b Manifest) bool {
	if a.Sequence != b.Sequence {
		return a.Sequence > b.Sequence
	}
	return a.BuildID > b.BuildID
}

// Activate points SNAPSHOTS/current at SNAPSHOTS/<id>: a new relative link
// is made beside it and renamed over it, so a reader sees the old or the new
// target and never neither.
func Activate(snapshots, id string) error {
	if !validBuildID(id) {
		return fmt.Errorf("%q is not a build id", id)
	}
	if _, err := os.Stat(filepath.Join(snapshots, id, ManifestName)); err != nil {
		return fmt.Errorf("build %s is not in %s", id, snapshots)
	}
	tmp := filepath.Join(snapshots, "."+CurrentName+".tmp-"+id)
	os.Remove(tmp)
	if err := os.Symlink(id, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(snapshots, CurrentName)); err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(snapshots)
}

// MinKeep is the fewest builds Prune keeps: the current one and the one
// before it, which pds serve may still be reading until it notices the
// changed link and swaps.
const MinKeep = 2

// Prune keeps the current build and the newest others up to keep builds in
// all (at least MinKeep), and removes the rest. It returns the ids removed.
func Prune(snapshots string, keep int) ([]string, error) {
	keep = max(keep, MinKeep)
	builds, err := Builds(snapshots)
	if err != nil {
		return nil, err
	}
	cur, _, err := Current(snapshots)
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
		removed = append(removed, b.ID)
	}
	return removed, nil
}

// Rollback points current at build id, or, when id is empty, at the newest
// kept build older than the current one. The build left, when it is newer
// than the one rolled back to, is written to SNAPSHOTS/refused so that a
// follower does not pull it again; a later build is followed as usual.
// pub, when set, must have signed the build rolled back to. It returns the
// builds left and entered.
func Rollback(snapshots, id string, pub *PublicKey) (from, to Build, err error) {
	cur, ok, err := Current(snapshots)
	if err != nil {
		return from, to, err
	}
	if !ok {
		return from, to, fmt.Errorf("%s has no %s build to roll back from", snapshots, CurrentName)
	}
	builds, err := Builds(snapshots)
	if err != nil {
		return cur, to, err
	}
	for _, b := range builds {
		if id == "" && newer(cur.Manifest, b.Manifest) || id != "" && b.ID == id {
			to = b
			break
		}
	}
	switch {
	case to.ID == "" && id == "":
		return cur, to, fmt.Errorf("%s keeps no build older than the current %s", snapshots, cur.ID)
	case to.ID == "":
		return cur, to, fmt.Errorf("build %s is not kept in %s", id, snapshots)
	case to.ID == cur.ID:
		return cur, to, fmt.Errorf("build %s is already the current one", id)
	}
	if pub != nil {
		if err := pub.VerifySignature(to.Dir); err != nil {
			return cur, to, err
		}
	}
	if _, err := Verify(to.Dir); err != nil {
		return cur, to, err
	}
	if newer(cur.Manifest, to.Manifest) {
		if err := addRefused(snapshots, cur.ID); err != nil {
			return cur, to, err
		}
	}
	return cur, to, Activate(snapshots, to.ID)
}

// Refused lists the build ids in SNAPSHOTS/refused.
func Refused(snapshots string) ([]string, error) {
	f, err := os.Open(filepath.Join(snapshots, RefusedName))
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

func addRefused(snapshots, id string) error {
	ids, err := Refused(snapshots)
	if err != nil || slices.Contains(ids, id) {
		return err
	}
	f, err := os.OpenFile(filepath.Join(snapshots, RefusedName), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintln(f, id); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
