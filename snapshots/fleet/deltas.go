package fleet

import (
	"archive/tar"
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/productdata/pds/snapshots"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"

	"github.com/klauspost/compress/zstd"
	"github.com/productdata/pds/internal/osfile"
	"github.com/productdata/pds/snapshots/delta"
	"github.com/productdata/pds/snapshots/trust"
	"golang.org/x/sync/errgroup"
)

// A delta file takes a replica from one build (its base) to another (its
// target) without fetching what the two share. It is a tar archive:
//
//	delta.json             deltaHeader: base and target build ids, and per target file how it is made
//	manifest.json          the target's manifest, and
//	manifest.json.minisig  its signature, as the target's folder holds them
//	files/<path>           for each target file made by "patch" or "whole", in the header's order:
//	                       zstd of a package delta patch from the base file, or of the whole file
//
// A file the base holds with the same checksum is copied from it ("same")
// rather than fetched. Nothing in the archive is trusted: the signature is checked
// against the reader's public key, and every file the delta makes, copied
// ones included, is hashed and compared with the signed manifest before the
// build can become current. That is the check a full pull makes, on the same
// bytes, so a delta is exactly as strong. The origin stores the delta from
// base B to build T as T/deltas/B, listed in T/deltas.json; a bundle for an
// air-gapped site is the same file.
const (
	deltaHeaderName = "delta.json"
	deltaFilesDir   = "files/"
	deltaFormat     = 1
	// DeltasName is the origin's list of the deltas stored beside a build.
	DeltasName = "deltas.json"
	// DefaultDeltas is how many earlier builds publish makes a delta from:
	// a week of nightly builds. A replica that has been away longer pulls
	// whole; by then the deltas of a busy week approach the build's size.
	DefaultDeltas  = 7
	maxDeltaHeader = 16 << 20
	// deltaWindow is the zstd window of a delta's entries (the encoder's
	// default): a reader refuses a frame that asks for more, so a hostile
	// delta cannot make it hold more than that.
	deltaWindow = 8 << 20
)

// Ways a target file is made.
const (
	howSame  = "same"  // copied from the base file From, which has its checksum
	howPatch = "patch" // a delta.Apply of files/<path> on the base file From
	howWhole = "whole" // files/<path> is the file, zstd-compressed
)

type deltaHeader struct {
	Format int         `json:"format"`
	Base   string      `json:"base"`
	Target string      `json:"target"`
	Files  []deltaFile `json:"files"`
	// Statements are the trust statements a bundle carries (package
	// snapshots/trust), as tar entries trust/NAME after the signature.
	Statements []string `json:"statements,omitempty"`
}

type deltaFile struct {
	Path string `json:"path"`
	How  string `json:"how"`
	From string `json:"from,omitempty"`
}

// deltaList is DeltasName: the deltas of a build, by base.
type deltaList struct {
	BuildID string       `json:"build_id"`
	Deltas  []deltaEntry `json:"deltas"`
}

type deltaEntry struct {
	Base string `json:"base"`
	Size int64  `json:"size"`
}

func deltaObject(target, base string) string { return target + "/deltas/" + base }

// DeltaStats says what WriteDelta wrote.
type DeltaStats struct {
	Base, Target         string
	Same, Patched, Whole int   // target files copied from the base, patched and carried whole
	Bytes                int64 // the delta file's size
	// SHA256 is the delta file's, when published (the trust statements
	// name it).
	SHA256 []byte
}

// WriteDelta writes to w the delta from the build in baseDir to the signed
// build in targetDir. The target is verified against its manifest first;
// the base is trusted only to be the build its manifest names (a reader
// checks everything it makes anyway).
func WriteDelta(ctx context.Context, w io.Writer, baseDir, targetDir string) (DeltaStats, error) {
	target, err := snapshots.VerifyContext(ctx, targetDir)
	if err != nil {
		return DeltaStats{}, err
	}
	return writeDelta(ctx, w, baseDir, targetDir, target, 0, nil, false)
}

// writeDelta is WriteDelta for a target verified already (target is its
// manifest). With a limit above 0, it stops with errDeltaTooLarge as soon
// as the delta has more bytes than that.
//
// A delta carries the target's minisign signature, which a build published
// through a trust root (unsigned) lacks: then the delta carries an empty
// one, and the trust statements vouch for the build (stmts, which a bundle
// carries, or the origin's).
func writeDelta(ctx context.Context, w io.Writer, baseDir, targetDir string, target snapshots.Manifest, limit int64, stmts trust.Files, unsigned bool) (DeltaStats, error) {
	var st DeltaStats
	base, err := snapshots.ReadManifest(baseDir)
	if err != nil {
		return st, err
	}
	mb, err := os.ReadFile(filepath.Join(targetDir, snapshots.ManifestName))
	if err != nil {
		return st, err
	}
	sig, err := os.ReadFile(filepath.Join(targetDir, snapshots.SignatureName))
	if err != nil && (!unsigned || !errors.Is(err, fs.ErrNotExist)) {
		return st, fmt.Errorf("%s is not signed (%v); sign it first with 'pds snapshot sign'", targetDir, err)
	}
	st.Base, st.Target = base.BuildID, target.BuildID
	byPath := map[string]snapshots.File{}
	bySum := map[string]string{}
	for _, f := range base.Files {
		byPath[f.Path] = f
		if _, ok := bySum[f.Checksum()]; !ok {
			bySum[f.Checksum()] = f.Path
		}
	}
	h := deltaHeader{Format: deltaFormat, Base: base.BuildID, Target: target.BuildID}
	for name := range stmts {
		h.Statements = append(h.Statements, name)
	}
	sort.Strings(h.Statements)
	for _, f := range target.Files {
		df := deltaFile{Path: f.Path}
		switch bf, ok := byPath[f.Path]; {
		case ok && bf.Checksum() == f.Checksum():
			df.How, df.From = howSame, f.Path
		case bySum[f.Checksum()] != "":
			df.How, df.From = howSame, bySum[f.Checksum()]
		case ok:
			df.How, df.From = howPatch, f.Path
		default:
			df.How = howWhole
		}
		h.Files = append(h.Files, df)
	}
	cw := &countWriter{w: w}
	tw := tar.NewWriter(cw)
	hb, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		return st, err
	}
	for _, e := range []struct {
		name string
		b    []byte
	}{{deltaHeaderName, hb}, {snapshots.ManifestName, mb}, {snapshots.SignatureName, sig}} {
		if err := writeTarBytes(tw, e.name, e.b); err != nil {
			return st, err
		}
	}
	for _, name := range h.Statements {
		if err := writeTarBytes(tw, TrustDir+"/"+name, stmts[name]); err != nil {
			return st, err
		}
	}
	for _, df := range h.Files {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		switch df.How {
		case howSame:
			st.Same++
			continue
		case howPatch:
			st.Patched++
		case howWhole:
			st.Whole++
		}
		if err := writeDeltaEntry(tw, df, baseDir, targetDir); err != nil {
			return st, err
		}
		if limit > 0 && cw.n > limit {
			st.Bytes = cw.n
			return st, errDeltaTooLarge
		}
	}
	if err := tw.Close(); err != nil {
		return st, err
	}
	st.Bytes = cw.n
	return st, nil
}

// mapped is a file's bytes mapped read-only (osfile.Map): a delta reads two
// versions of a file of up to a few hundred MB, which then stay the page
// cache's rather than the heap's.
type mapped struct {
	f *os.File
	b []byte
}

// mapRead maps the file at path (mapped.close lets it go).
func mapRead(path string) (*mapped, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	b, err := osfile.Map(f, int(st.Size()))
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("map %s: %v", path, err)
	}
	return &mapped{f: f, b: b}, nil
}

func (m *mapped) close() {
	osfile.Unmap(m.b)
	m.f.Close()
}

// writeDeltaEntry writes files/<path> for one patched or whole file: the
// compressed entry goes to a temporary file first, since a tar header
// carries its size.
func writeDeltaEntry(tw *tar.Writer, df deltaFile, baseDir, targetDir string) (err error) {
	tmp, err := os.CreateTemp("", "pds-delta-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	zw, err := zstd.NewWriter(tmp, zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(deltaWindow))
	if err != nil {
		return err
	}
	now, err := mapRead(filepath.Join(targetDir, filepath.FromSlash(df.Path)))
	if err != nil {
		return err
	}
	defer now.close()
	// A mapped file cut short by someone else faults on reading: an error
	// here, not a crash.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if _, fault := r.(interface{ Addr() uintptr }); !fault {
				panic(r)
			}
			err = fmt.Errorf("%s changed while a delta was made from it: %v", df.Path, r)
		}
	}()
	if df.How == howPatch {
		old, err := mapRead(filepath.Join(baseDir, filepath.FromSlash(df.From)))
		if err != nil {
			return err
		}
		defer old.close()
		if _, err := delta.Encode(zw, old.b, now.b); err != nil {
			return err
		}
	} else if _, err := zw.Write(now.b); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	size, err := tmp.Seek(0, io.SeekCurrent)
	if err != nil {
		return err
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: deltaFilesDir + df.Path, Mode: 0o644, Size: size, Format: tar.FormatPAX}); err != nil {
		return err
	}
	_, err = io.Copy(tw, tmp)
	return err
}

func writeTarBytes(tw *tar.Writer, name string, b []byte) error {
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(b)), Format: tar.FormatPAX}); err != nil {
		return err
	}
	_, err := tw.Write(b)
	return err
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// maxStatements bounds the trust statements a bundle may carry: roots
// (one per rotation) and three more.
const maxStatements = 64

// openedDelta is a delta file read up to its first file entry.
type openedDelta struct {
	tr     *tar.Reader
	header deltaHeader
	mb     []byte // the target's manifest, as signed
	sig    []byte
	// stmts are the trust statements a bundle carries.
	stmts trust.Files
}

// openDelta reads a delta's header, manifest and signature. Its errors are
// the file's fault and wrap ErrRefused.
func openDelta(r io.Reader, where string) (*openedDelta, error) {
	d := &openedDelta{tr: tar.NewReader(r)}
	var err error
	var hb []byte
	for _, e := range []struct {
		name string
		dst  *[]byte
	}{{deltaHeaderName, &hb}, {snapshots.ManifestName, &d.mb}, {snapshots.SignatureName, &d.sig}} {
		if *e.dst, err = readTarEntry(d.tr, e.name); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrRefused, where, err)
		}
	}
	if err := json.Unmarshal(hb, &d.header); err != nil {
		return nil, fmt.Errorf("%w: %s: %s: %w", ErrRefused, where, deltaHeaderName, err)
	}
	if d.header.Format != deltaFormat {
		return nil, fmt.Errorf("%w: %s: delta format %d; this pds reads format %d", ErrRefused, where, d.header.Format, deltaFormat)
	}
	if len(d.header.Statements) > maxStatements {
		return nil, fmt.Errorf("%w: %s: %d trust statements, more than %d", ErrRefused, where, len(d.header.Statements), maxStatements)
	}
	for _, name := range d.header.Statements {
		b, err := readTarEntry(d.tr, TrustDir+"/"+name)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrRefused, where, err)
		}
		if d.stmts == nil {
			d.stmts = trust.Files{}
		}
		d.stmts[name] = b
	}
	return d, nil
}

func readTarEntry(tr *tar.Reader, name string) ([]byte, error) {
	hd, err := tr.Next()
	if err != nil {
		if errors.Is(noEOF(err), io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("reading %s: the file is cut short", name)
		}
		return nil, fmt.Errorf("reading %s: %v (it is not a delta)", name, err)
	}
	if hd.Name != name {
		return nil, fmt.Errorf("found %q where %s belongs", hd.Name, name)
	}
	if hd.Size > maxDeltaHeader {
		return nil, fmt.Errorf("%s is larger than %d bytes", name, maxDeltaHeader)
	}
	b, err := io.ReadAll(tr)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %v", name, cutShort(err))
	}
	return b, nil
}

// cutShort names an early end of a delta for what it is.
func cutShort(err error) error {
	if errors.Is(noEOF(err), io.ErrUnexpectedEOF) {
		return errors.New("the file is cut short")
	}
	return err
}

// entryReader reads one tar entry, remembering an early end of the file.
type entryReader struct {
	r   io.Reader
	cut bool
}

func (e *entryReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		e.cut = true
	}
	return n, err
}

// noEOF turns a bare EOF into ErrUnexpectedEOF: inside a delta, any end is
// early.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// apply makes staging hold the target m (whose signature the caller has
// checked, and whose manifest bytes are d.mb) from the base build in
// baseDir. Each file is hashed as it is made and compared with m; the first
// difference, or anything else wrong with the delta, is an error wrapping
// ErrRefused. It returns the bytes it wrote from the delta (copied files not counted).
func (d *openedDelta) apply(ctx context.Context, base Build, staging string, m snapshots.Manifest, where string) (int64, error) {
	h := d.header
	if h.Target != m.BuildID {
		return 0, fmt.Errorf("%w: %s leads to build %s, not %s", ErrRefused, where, h.Target, m.BuildID)
	}
	if h.Base != base.ID || h.Base != base.Manifest.BuildID {
		return 0, fmt.Errorf("%w: %s is a delta from build %s, and this replica keeps %s", ErrRefused, where, h.Base, base.ID)
	}
	if len(h.Files) != len(m.Files) {
		return 0, fmt.Errorf("%w: %s makes %d files; the manifest lists %d", ErrRefused, where, len(h.Files), len(m.Files))
	}
	// The files the same as the kept build's are hashed beside the loop,
	// which patches the others from the delta's stream: on as many cores
	// as there are (at 10M products they are 10 GB, the store's tables).
	var same errgroup.Group
	same.SetLimit(runtime.GOMAXPROCS(0))
	written, err := d.applyFiles(ctx, base, staging, m, where, &same)
	if werr := same.Wait(); err == nil {
		err = werr
	}
	return written, err
}

// applyFiles is apply's loop over the files: those the same as the kept
// build's are checked on same.
func (d *openedDelta) applyFiles(ctx context.Context, base Build, staging string, m snapshots.Manifest, where string, same *errgroup.Group) (int64, error) {
	h := d.header
	baseFiles := map[string]snapshots.File{}
	for _, f := range base.Manifest.Files {
		baseFiles[f.Path] = f
	}
	var written int64
	for i, f := range m.Files {
		if err := ctx.Err(); err != nil {
			return written, err
		}
		df := h.Files[i]
		if df.Path != f.Path {
			return written, fmt.Errorf("%w: %s: file %d is %q; the manifest lists %q", ErrRefused, where, i, df.Path, f.Path)
		}
		dst := filepath.Join(staging, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return written, err
		}
		var src string
		if df.How != howWhole {
			if _, ok := baseFiles[df.From]; !ok {
				return written, fmt.Errorf("%w: %s: %s comes from %q, which build %s does not hold", ErrRefused, where, f.Path, df.From, base.ID)
			}
			src = filepath.Join(base.Dir, filepath.FromSlash(df.From))
		}
		var err error
		var n int64
		switch df.How {
		case howSame:
			err = sameFileAs(src, dst, f.Path)
			if err == nil {
				same.Go(func() error {
					err := checkMade(dst, f)
					if errors.Is(err, errMismatch) {
						return fmt.Errorf("%w: %s: %s %w", ErrRefused, where, f.Path, err)
					}
					return err
				})
			}
		case howPatch, howWhole:
			n, err = d.make(df, src, dst, f, where)
			written += n
		default:
			err = fmt.Errorf("%w: %s: %s is made by %q, which this pds does not know", ErrRefused, where, f.Path, df.How)
		}
		if errors.Is(err, errMismatch) {
			return written, fmt.Errorf("%w: %s: %s %w", ErrRefused, where, f.Path, err)
		}
		if err != nil {
			return written, err
		}
	}
	if hd, err := d.tr.Next(); err != io.EOF {
		name := ""
		if hd != nil {
			name = hd.Name
		}
		return written, fmt.Errorf("%w: %s: %q follows the last file", ErrRefused, where, name)
	}
	return written, nil
}

// make writes one patched or whole file from the next entry.
func (d *openedDelta) make(df deltaFile, src, dst string, f snapshots.File, where string) (int64, error) {
	hd, err := d.tr.Next()
	if err != nil {
		return 0, fmt.Errorf("%w: %s: reading %s%s: %w", ErrRefused, where, deltaFilesDir, df.Path, cutShort(err))
	}
	if hd.Name != deltaFilesDir+df.Path {
		return 0, fmt.Errorf("%w: %s: found %q where %s%s belongs", ErrRefused, where, hd.Name, deltaFilesDir, df.Path)
	}
	er := &entryReader{r: d.tr}
	zr, err := zstd.NewReader(er, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(deltaWindow), zstd.WithDecoderMaxMemory(64<<20))
	if err != nil {
		return 0, err
	}
	defer zr.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return 0, err
	}
	defer out.Close()
	// Hashed as it is written, through one buffer: a patch is many small
	// copies.
	h := f.NewHash()
	bw := bufio.NewWriterSize(io.MultiWriter(out, h), 1<<20)
	var n int64
	if df.How == howPatch {
		in, oerr := os.Open(src)
		if oerr != nil {
			return 0, oerr
		}
		defer in.Close()
		st, serr := in.Stat()
		if serr != nil {
			return 0, serr
		}
		n, err = delta.Apply(bw, zr, in, st.Size(), f.Size)
	} else {
		n, err = io.Copy(bw, io.LimitReader(zr, f.Size+1))
	}
	if err == nil {
		err = bw.Flush()
	}
	if er.cut {
		return n, fmt.Errorf("%w: %s: %s%s: the file is cut short", ErrRefused, where, deltaFilesDir, f.Path)
	}
	if hostFault(err) {
		return n, fmt.Errorf("%s: %s%s: %w", where, deltaFilesDir, f.Path, err) // writing it, not the delta, failed
	}
	if err != nil {
		return n, fmt.Errorf("%w: %s: %s%s: %w", ErrRefused, where, deltaFilesDir, f.Path, err)
	}
	if err := matches(n, h, f); err != nil {
		return n, err
	}
	if err := out.Sync(); err != nil {
		return n, err
	}
	return n, out.Close()
}

// checkMade hashes a made file and compares it with the manifest's listing.
func checkMade(p string, f snapshots.File) error {
	h := f.NewHash()
	n, err := hashFile(p, h)
	if err != nil {
		return err
	}
	return matches(n, h, f)
}

func matches(n int64, h hash.Hash, f snapshots.File) error {
	if n != f.Size {
		return fmt.Errorf("%w: it has %d bytes, and the manifest says %d", errMismatch, n, f.Size)
	}
	if !f.Matches(h) {
		return fmt.Errorf("%w's checksum", errMismatch)
	}
	return nil
}

// sameFileAs makes dst, the file path of the build being made, the same as
// src, the kept build's: a hard link for a file builds share (linkable), a
// copy for any other file (or one that cannot be linked). A link moves the
// kept file's change time; a server serving the kept build takes that alone
// for no write of a shared file (see the threat model in
// docs/snapshots.md), but a moved change time of any other file stops it
// serving. Either way the caller checks the file against the signed
// manifest.
func sameFileAs(src, dst, path string) error {
	if linkable(path) {
		return osfile.LinkOrCopy(src, dst)
	}
	return osfile.Copy(src, dst)
}

// linkable reports whether the file at manifest path p, when a delta's
// target has it the same as the kept build, is hard-linked from there
// (sameFileAs) rather than copied: a store table or point index file.
func linkable(p string) bool { return snapshots.Shared(p) }
