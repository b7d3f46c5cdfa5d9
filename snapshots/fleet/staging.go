package fleet

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/productdata/pds/snapshots"
)

// Every way a build comes into a snapshots directory (a whole pull, a pull
// by delta, an applied bundle) makes it in a staging folder there and
// renames that folder to the build's id only once every file matched the
// signed manifest: a build under its own name is always whole.

// deltaStagingSuffix names the folder a delta is applied in, beside the
// staging folder of a whole pull (whose partial files a failed delta must
// not lose); removeStaleStaging removes a leftover one.
const deltaStagingSuffix = "-delta"

// stageBuild makes snaps/<m.BuildID> through the staging folder dir: it
// makes dir, writes the signed manifest mb into it, has fill write the
// build's files there, then writes the signature sig and renames dir into
// place (finishStaging). A file system that fills meanwhile is ErrNoSpace
// (filledUp). A failure removes dir, but for a resumable stage (a whole
// pull) whose failure is neither a refusal nor a full disk: the next pull
// resumes its files. A stage that is not resumable starts from an empty
// dir.
func stageBuild(snaps, dir string, m snapshots.Manifest, mb []byte, sig statement, resumable bool, fill func() error) error {
	if !resumable {
		os.RemoveAll(dir)
	}
	err := os.MkdirAll(dir, 0o755)
	if err == nil {
		err = writeSynced(filepath.Join(dir, snapshots.ManifestName), mb)
	}
	if err == nil {
		err = fill()
	}
	if err == nil {
		err = finishStaging(dir, snaps, m.BuildID, sig)
	}
	switch {
	case err == nil:
		return nil
	case noSpace(err):
		os.RemoveAll(dir)
		return filledUp(snaps, m, err)
	case !resumable || errors.Is(err, ErrRefused):
		os.RemoveAll(dir)
	}
	return err
}

// finishStaging writes the signature into a staging folder whose files all
// matched, and renames it to snapshots/<id>. A folder left at that name
// without a manifest (what a removal that failed halfway may leave) is
// discarded first; the callers take a build whose manifest is there rather
// than stage it.
func finishStaging(staging, snaps, id string, sig statement) error {
	if err := writeSynced(filepath.Join(staging, sig.name), sig.b); err != nil {
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

// filledUp is the error of a build that did not fit after all: the file
// system of snapshots filled while it landed (err says where), and what was
// staged has been removed.
func filledUp(snaps string, m snapshots.Manifest, err error) error {
	var total int64
	for _, f := range m.Files {
		total += f.Size
	}
	return fmt.Errorf("%w: build %s needs %d bytes in %s, and the file system filled while it landed (%w); what was staged was removed: make room and try again",
		ErrNoSpace, m.BuildID, total, snaps, err)
}

// removeStaleStaging removes staging directories of other builds (a pull
// interrupted before a newer build was published is not resumed) and what
// is left of removed builds (discard).
func removeStaleStaging(snaps, keep string) {
	entries, _ := os.ReadDir(snaps)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), stagingPre) && e.Name() != stagingPre+keep || strings.HasPrefix(e.Name(), statementTmpPre) {
			os.RemoveAll(filepath.Join(snaps, e.Name()))
		}
	}
	removeTrash(snaps)
}

// checkPlaced reports whether snaps/<id> holds the build already (pulled or
// applied before and kept, then left by a rollback, or fetched and not made
// current), after checking it again against its signature and manifest: a
// check that fails for a fault of this host is hostFailed, any other
// failure refuses the build.
func checkPlaced(snaps, id string, pub snapshots.Verifier) (bool, error) {
	dir := filepath.Join(snaps, id)
	if _, err := os.Stat(filepath.Join(dir, snapshots.ManifestName)); err != nil {
		return false, nil
	}
	if _, err := snapshots.VerifySigned(dir, pub); err != nil {
		if hostFault(err) {
			return false, hostFailed(id, err, pullAgain)
		}
		return false, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	return true, nil
}
