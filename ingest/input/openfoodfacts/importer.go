package openfoodfacts

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/ingest/jsonutf8"
	"github.com/productdata/pds/ingest/scratch"
	"github.com/productdata/pds/internal/progress"
)

// Options configure an import.
type Options struct {
	// In is the dump: a .jsonl file, plain, gzip or zstd (told by its first
	// bytes), or "-" for Stdin.
	In    string
	Stdin io.Reader
	// Out is the pds input directory to create; it must not exist. It is
	// written beside itself and renamed into place when whole.
	Out string
	// Limit stops after this many lines of the dump (0: all).
	Limit int64
	// Strict fails the import on the first unusable record; nothing is
	// written then.
	Strict bool
	// NoDocuments skips writing each record's bytes under documents/.
	NoDocuments bool
	// RetrievedAt is when the dump was fetched (default: the file's
	// modification time; now for stdin): every document's retrieved_at.
	RetrievedAt time.Time
	// Rejects gets one line per unusable record, per skipped field, per
	// record whose text is not all UTF-8 and per code with a wrong check
	// digit ("file:line: reason"), the first 1000 of each kind; all are
	// counted. Only unusable records stop a Strict import.
	Rejects io.Writer
	// Progress gets a line about once a second and nothing else; nil for none.
	Progress      io.Writer
	ProgressEvery time.Duration
	Context       context.Context
}

// Summary reports a finished import.
type Summary struct {
	Lines      int64            // lines of the dump read (empty lines included)
	Products   int64            // records imported
	SKUs       int64            // of which with a code that is no valid GTIN
	Unusable   int64            // records that could not be used at all
	Reasons    map[string]int64 // unusable records by kind of reason
	Duplicates int64            // of Unusable: a code already imported
	Skipped    int64            // fields skipped in imported records
	// Replaced counts the imported records whose text was not all UTF-8
	// (bytes that are not, unpaired surrogate escapes): their values hold
	// U+FFFD in those places, and each was warned of.
	Replaced int64
	// CheckDigits counts the imported records whose code has a GTIN's digits
	// but a wrong check digit (of SKUs; each was warned of).
	CheckDigits int64
	// ByteOrderMark is set when the dump began with a UTF-8 byte order mark,
	// which was skipped.
	ByteOrderMark bool
	Claims        int64
	Verdicts      int64
	Sources       int // sources written (Open Food Facts and the producers and imports its records name)
	Documents     string
	Duration      time.Duration
}

// ErrStrict is returned when Strict meets an unusable record.
var ErrStrict = errors.New("strict import failed on an unusable record")

// MaxRecord is the longest record line read; a longer one is unusable.
const MaxRecord = 32 << 20

// maxReported is how many unusable records (and, apart, skipped fields) are
// printed; all are counted.
const maxReported = 1000

// Files written into the input directory besides the documents folder.
const (
	fileParties   = "parties.ndjson"
	fileSources   = "sources.ndjson"
	fileProducts  = "products.ndjson"
	fileClaims    = "claims.ndjson"
	fileDocuments = "documents.ndjson"
	fileEvidence  = "evidence.ndjson"
	fileVerdicts  = "verdicts.ndjson"
)

// DocumentsDir is the folder of the input directory that holds each record's
// exact bytes, at documents/<first two hex digits>/<sha256 hex>.json.
const DocumentsDir = "documents"

// DocumentPath is where a document with this content hash ("sha256:…") is kept
// under an input directory.
func DocumentPath(inputDir, contentHash string) string {
	h := strings.TrimPrefix(contentHash, "sha256:")
	if len(h) < 2 {
		return filepath.Join(inputDir, DocumentsDir, h+".json")
	}
	return filepath.Join(inputDir, DocumentsDir, h[:2], h+".json")
}

// OFFPartyID is the party that operates the Open Food Facts source.
var OFFPartyID = sourceUUID("party:openfoodfacts")

type importer struct {
	opts    Options
	name    string // the dump's name in reports
	tmp     string
	seen    *scratch.Store
	w       map[string]*bufio.Writer
	files   map[string]*os.File
	sources map[string]domain.Source
	sum     Summary
	printed map[string]int
	lines   atomic.Int64
	keyBuf  []byte
}

// Import streams an Open Food Facts dump into a pds input directory.
func Import(opts Options) (Summary, error) {
	start := time.Now()
	if opts.Context == nil {
		opts.Context = context.Background()
	}
	if opts.Rejects == nil {
		opts.Rejects = io.Discard
	}
	im := &importer{opts: opts, name: opts.In, sources: map[string]domain.Source{}, printed: map[string]int{},
		w: map[string]*bufio.Writer{}, files: map[string]*os.File{}}
	im.sum.Reasons = map[string]int64{}
	if opts.In == "-" {
		im.name = "stdin"
	}
	src, closeIn, err := im.open()
	if err != nil {
		return im.sum, err
	}
	defer closeIn()
	if _, err := os.Stat(opts.Out); err == nil {
		return im.sum, fmt.Errorf("output %s already exists; import into a new directory", opts.Out)
	}
	suffix := make([]byte, 6)
	rand.Read(suffix)
	im.tmp = filepath.Join(filepath.Dir(filepath.Clean(opts.Out)), "."+filepath.Base(opts.Out)+".tmp-"+hex.EncodeToString(suffix))
	if err := os.MkdirAll(im.tmp, 0o755); err != nil {
		return im.sum, fmt.Errorf("output: %w", err)
	}
	defer os.RemoveAll(im.tmp)
	if err := im.create(); err != nil {
		return im.sum, err
	}
	im.seen, err = scratch.Open(filepath.Join(im.tmp, ".seen"))
	if err != nil {
		return im.sum, err
	}
	defer func() {
		if im.seen != nil {
			im.seen.Close()
		}
	}()
	stop := im.startProgress()
	err = im.read(src)
	stop()
	if err != nil {
		im.closeFiles()
		return im.sum, err
	}
	if err := im.finish(); err != nil {
		return im.sum, err
	}
	if err := os.Rename(im.tmp, opts.Out); err != nil {
		return im.sum, fmt.Errorf("publish input directory: %w", err)
	}
	im.sum.Duration = time.Since(start)
	return im.sum, nil
}

// open opens the dump, decompressing it when it starts with the gzip or the
// zstd magic number.
func (im *importer) open() (io.Reader, func(), error) {
	var r io.Reader
	closeIn := func() {}
	if im.opts.In == "-" {
		if im.opts.Stdin == nil {
			return nil, nil, errors.New("input: no standard input")
		}
		r = im.opts.Stdin
		if im.opts.RetrievedAt.IsZero() {
			im.opts.RetrievedAt = time.Now()
		}
	} else {
		f, err := os.Open(im.opts.In)
		if err != nil {
			return nil, nil, fmt.Errorf("input: %w", err)
		}
		closeIn = func() { f.Close() }
		if im.opts.RetrievedAt.IsZero() {
			if st, err := f.Stat(); err == nil {
				im.opts.RetrievedAt = st.ModTime()
			}
		}
		r = f
	}
	br := bufio.NewReaderSize(r, 1<<20)
	magic, _ := br.Peek(4)
	switch {
	case bytes.HasPrefix(magic, gzipMagic):
		gz, err := gzip.NewReader(br)
		if err != nil {
			closeIn()
			return nil, nil, fmt.Errorf("input: %s: %w", im.name, err)
		}
		return gz, func() { gz.Close(); closeIn() }, nil
	case bytes.HasPrefix(magic, zstdMagic):
		zr, err := zstd.NewReader(br)
		if err != nil {
			closeIn()
			return nil, nil, fmt.Errorf("input: %s: %w", im.name, err)
		}
		return zr, func() { zr.Close(); closeIn() }, nil
	}
	return br, closeIn, nil
}

// The first bytes of a gzip stream and of a zstd frame.
var (
	gzipMagic = []byte{0x1f, 0x8b}
	zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}
)

func (im *importer) create() error {
	for _, name := range []string{fileParties, fileSources, fileProducts, fileClaims, fileDocuments, fileEvidence, fileVerdicts} {
		f, err := os.Create(filepath.Join(im.tmp, name))
		if err != nil {
			return fmt.Errorf("output: %w", err)
		}
		im.files[name] = f
		im.w[name] = bufio.NewWriterSize(f, 256<<10)
	}
	if im.opts.NoDocuments {
		return nil
	}
	for i := 0; i < 256; i++ {
		if err := os.MkdirAll(filepath.Join(im.tmp, DocumentsDir, fmt.Sprintf("%02x", i)), 0o755); err != nil {
			return fmt.Errorf("output: %w", err)
		}
	}
	return nil
}

func (im *importer) closeFiles() {
	for _, f := range im.files {
		f.Close()
	}
}

// read streams the dump line by line. A record is one line; its bytes
// without the line end are the document.
func (im *importer) read(src io.Reader) error {
	r := bufio.NewReaderSize(src, 1<<20)
	retrieved := im.opts.RetrievedAt.UTC().Format(time.RFC3339)
	var line []byte
	for n := int64(1); ; n++ {
		if err := im.opts.Context.Err(); err != nil {
			return err
		}
		if im.opts.Limit > 0 && n > im.opts.Limit {
			return nil
		}
		var tooLong bool
		var err error
		line, tooLong, err = readLine(r, line[:0])
		if err == io.EOF && len(line) == 0 && !tooLong {
			return nil
		}
		if n == 1 && bytes.HasPrefix(line, []byte(byteOrderMark)) {
			// RFC 8259 lets a parser ignore a byte order mark at the start
			// of a text, as pds ingest does; the record is what follows it.
			line = line[len(byteOrderMark):]
			im.sum.ByteOrderMark = true
		}
		if err != nil && err != io.EOF {
			// A cut-off or corrupt compressed stream or a read error: what
			// was read stays.
			return im.unusable(n, "read error", "the dump cannot be read past this line: "+err.Error())
		}
		im.lines.Store(n)
		im.sum.Lines = n
		switch {
		case tooLong:
			if rerr := im.unusable(n, "too long", fmt.Sprintf("record longer than %d bytes", MaxRecord)); rerr != nil {
				return rerr
			}
		case len(bytes.TrimSpace(line)) == 0:
			// an empty line is no record
		default:
			if rerr := im.record(n, line, retrieved); rerr != nil {
				return rerr
			}
		}
		if err == io.EOF {
			return nil
		}
	}
}

// readLine reads one line (without "\n" or "\r\n") into buf. A line over
// MaxRecord is read to its end and returned empty with tooLong set.
func readLine(r *bufio.Reader, buf []byte) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(buf)+len(chunk) > MaxRecord {
				tooLong, buf = true, buf[:0]
			} else {
				buf = append(buf, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		buf = bytes.TrimSuffix(buf, []byte("\n"))
		buf = bytes.TrimSuffix(buf, []byte("\r"))
		return buf, tooLong, err
	}
}

// byteOrderMark is the UTF-8 encoding of U+FEFF.
const byteOrderMark = "\xef\xbb\xbf"

// record maps one record and writes what it becomes.
func (im *importer) record(n int64, line []byte, retrieved string) error {
	m, err := Map(line, retrieved)
	if err != nil {
		return im.unusable(n, reasonKind(err.Error()), err.Error())
	}
	im.keyBuf = append(im.keyBuf[:0], m.Subject...)
	if first, dup, err := im.seen.Get(im.keyBuf, nil); err != nil {
		return err
	} else if dup {
		im.sum.Duplicates++
		return im.unusable(n, "duplicate code", fmt.Sprintf("duplicate code: %s was imported from line %s; this record is left out", m.Subject, first))
	}
	if err := im.seen.Set(im.keyBuf, []byte(strconv.FormatInt(n, 10))); err != nil {
		return err
	}
	for _, f := range m.Skipped {
		im.report("skipped", fmt.Sprintf("%s:%d: %s (field skipped)", im.name, n, f))
	}
	im.sum.Skipped += int64(len(m.Skipped))
	if !jsonutf8.Valid(line) {
		// Map read the record with encoding/json, which puts U+FFFD in
		// place of each bad byte or unpaired surrogate escape of a string
		// (and every value the import writes is such a string or a number),
		// but says nothing: this says where.
		first, total := jsonutf8.Check(line, 1)
		msg := fmt.Sprintf("%s:%d: %s", im.name, n, first[0])
		if total > 1 {
			msg += fmt.Sprintf(", and %d more", total-1)
		}
		im.report("invalid UTF-8", msg+"; replaced with U+FFFD")
		im.sum.Replaced++
	}
	if m.WrongCheckDigit != "" {
		im.report("wrong check digit", fmt.Sprintf("%s:%d: %s", im.name, n, m.WrongCheckDigit))
		im.sum.CheckDigits++
	}
	if !im.opts.NoDocuments {
		if err := im.writeDocument(m.Document.ContentHash, line); err != nil {
			return err
		}
	}
	for _, s := range m.Sources {
		if prev, ok := im.sources[s.ID]; !ok || (prev.LicenceName == LicenceODbL && s.LicenceName != LicenceODbL) {
			im.sources[s.ID] = s
		}
	}
	if err := im.write(fileProducts, m.Product); err != nil {
		return err
	}
	if err := im.write(fileDocuments, m.Document); err != nil {
		return err
	}
	for i := range m.Claims {
		if err := im.write(fileClaims, m.Claims[i]); err != nil {
			return err
		}
		if err := im.write(fileEvidence, m.Evidence[i]); err != nil {
			return err
		}
	}
	for i := range m.Verdicts {
		if err := im.write(fileVerdicts, m.Verdicts[i]); err != nil {
			return err
		}
	}
	im.sum.Products++
	if m.SKU {
		im.sum.SKUs++
	}
	im.sum.Claims += int64(len(m.Claims))
	im.sum.Verdicts += int64(len(m.Verdicts))
	return nil
}

// reasonKind groups unusable-record reasons for the summary.
func reasonKind(reason string) string {
	for _, k := range []string{"not a JSON object", "not valid JSON", "product: not valid JSON", "no code", "no last_modified_t"} {
		if strings.HasPrefix(reason, k) {
			return k
		}
	}
	switch {
	case strings.HasPrefix(reason, "code "):
		return "code fits no identifier"
	case strings.HasPrefix(reason, "last_modified_t "):
		return "last_modified_t not a Unix time"
	}
	return "other"
}

func (im *importer) unusable(n int64, kind, reason string) error {
	im.sum.Unusable++
	im.sum.Reasons[kind]++
	msg := strings.ToValidUTF8(fmt.Sprintf("%s:%d: %s", im.name, n, reason), "\uFFFD")
	if im.opts.Strict {
		fmt.Fprintln(im.opts.Rejects, msg)
		return fmt.Errorf("%w: %s", ErrStrict, msg)
	}
	if kind == "read error" {
		fmt.Fprintln(im.opts.Rejects, msg) // always shown: nothing after it was read
		return nil
	}
	im.report("unusable", msg)
	return nil
}

// report prints msg, one of the first maxReported of its kind, with any
// byte of the record it quotes that is not UTF-8 shown as U+FFFD.
func (im *importer) report(kind, msg string) {
	k := im.printed[kind]
	im.printed[kind] = k + 1
	switch {
	case k < maxReported:
		fmt.Fprintln(im.opts.Rejects, strings.ToValidUTF8(msg, "\uFFFD"))
	case k == maxReported:
		fmt.Fprintf(im.opts.Rejects, "%s: further %s lines are counted, not shown\n", im.name, kind)
	}
}

func (im *importer) write(file string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	w := im.w[file]
	w.Write(b)
	return w.WriteByte('\n')
}

// writeDocument keeps a record's bytes under its content hash. The same
// bytes twice are one file.
func (im *importer) writeDocument(hash string, b []byte) error {
	path := DocumentPath(im.tmp, hash)
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("output: %w", err)
	}
	return nil
}

// finish writes the party and the sources and closes every file.
func (im *importer) finish() error {
	off := OFFSource()
	off.OperatorPartyID = &OFFPartyID
	if err := im.write(fileParties, domain.Party{ID: OFFPartyID, Name: "Open Food Facts"}); err != nil {
		return err
	}
	list := []domain.Source{off}
	ids := make([]string, 0, len(im.sources))
	for id := range im.sources {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		list = append(list, im.sources[id])
	}
	for _, s := range list {
		if err := im.write(fileSources, s); err != nil {
			return err
		}
	}
	im.sum.Sources = len(list)
	for name, w := range im.w {
		if err := w.Flush(); err != nil {
			return fmt.Errorf("output: %s: %w", name, err)
		}
		if err := im.files[name].Close(); err != nil {
			return fmt.Errorf("output: %s: %w", name, err)
		}
	}
	seen := im.seen
	im.seen = nil
	if err := seen.Close(); err != nil {
		return err
	}
	if err := os.RemoveAll(filepath.Join(im.tmp, ".seen")); err != nil {
		return err
	}
	if !im.opts.NoDocuments {
		im.sum.Documents = filepath.Join(im.opts.Out, DocumentsDir)
	}
	return nil
}

func (im *importer) startProgress() (stop func()) {
	if im.opts.Progress == nil {
		return func() {}
	}
	start := time.Now()
	return progress.Start(im.opts.ProgressEvery, func(now time.Time) {
		n := im.lines.Load()
		fmt.Fprintf(im.opts.Progress, "import: %d lines read, %.0f lines/s\n", n, float64(n)/now.Sub(start).Seconds())
	})
}
