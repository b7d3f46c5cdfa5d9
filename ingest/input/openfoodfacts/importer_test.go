package openfoodfacts_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/ingest"
	"github.com/productdata/pds/ingest/input/openfoodfacts"
)

// messyDump is a hand-written dump in OFF's shape with one messy trait a
// line; want lists what the import says about each line number.
var messyDump = []string{
	/* 1 */ `{"code":"3017620422003","brands":"Nutella,Ferrero","last_modified_t":1700000000,"nutriments":{"sugars_100g":"56.3","fat_100g":30.9,"fiber_100g":"n/a","calcium_100g":0.1,"calcium_unit":"spoons"},"nova_group":"4","data_quality_errors_tags":[],"data_quality_warnings_tags":["en:w1"]}`,
	/* 2 */ `{"code":3017620422003,"brands":"Duplicate","last_modified_t":1700000001}`,
	/* 3 */ `{"code":"3017620422004","brands":"Check digit off","last_modified_t":"1700000000","quantity":""}`,
	/* 4 */ `{"code":"abc def","last_modified_t":1700000000}`,
	/* 5 */ `{"code":"5449000179661","last_mod`,
	/* 6 */ ``,
	/* 7 */ `[1,2]`,
	/* 8 */ `{"brands":"no code","last_modified_t":1700000000}`,
	/* 9 */ `{"code":"96385074","brands":"","last_modified_t":"yesterday"}`,
	/* 10 */ `{"status":1,"code":"5449000179661","product":{"code":"5449000179661","brands":"Minute Maid","last_modified_t":1614040025,"nutriments":{"sugars_100g":9.6}}}`,
	/* 11 */ `{"code":"96385074","brands":"Eight","last_modified_t":1700000000}`,
	/* 12 */ `{"code":"00000096385074","brands":"Eight again, as 14 digits","last_modified_t":1700000000}`,
}

var messyWant = []string{
	":2: duplicate code: gtin:03017620422003 was imported from line 1; this record is left out",
	`:4: code "abc def" is no valid GTIN and cannot be an internal SKU`,
	":5: not valid JSON",
	":7: not a JSON object",
	":8: no code",
	":9: last_modified_t \"yesterday\" is not a Unix time",
	":12: duplicate code: gtin:00000096385074 was imported from line 11",
	`:1: nutriments.fiber_100g: "n/a" is not a number (field skipped)`,
	`:1: nutriments.calcium_100g: unknown unit "spoons" (field skipped)`,
}

// writeDump writes lines as a dump file, compressed when compress is gzip
// or zstd.
func writeDump(t *testing.T, lines []string, compress string) string {
	t.Helper()
	var buf bytes.Buffer
	var w io.WriteCloser
	name := "dump.jsonl"
	switch compress {
	case "gzip":
		w, name = gzip.NewWriter(&buf), name+".gz"
	case "zstd":
		zw, err := zstd.NewWriter(&buf)
		if err != nil {
			t.Fatal(err)
		}
		w, name = zw, name+".zst"
	}
	text := strings.Join(lines, "\n") + "\n"
	if w != nil {
		io.WriteString(w, text)
		w.Close()
	} else {
		buf.WriteString(text)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func TestImportMessy(t *testing.T) {
	for _, mode := range []string{"plain", "gzip", "zstd", "stdin"} {
		t.Run(mode, func(t *testing.T) {
			path := writeDump(t, messyDump, mode)
			opts := openfoodfacts.Options{In: path, RetrievedAt: time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)}
			name := path
			if mode == "stdin" {
				f, err := os.Open(path)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				opts.In, opts.Stdin, name = "-", f, "stdin"
			}
			var rejects, progress bytes.Buffer
			opts.Out = filepath.Join(t.TempDir(), "in")
			opts.Rejects = &rejects
			opts.Progress, opts.ProgressEvery = &progress, time.Millisecond
			sum, err := openfoodfacts.Import(opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range messyWant {
				if !strings.Contains(rejects.String(), name+w) {
					t.Errorf("rejects lack %q:\n%s", name+w, rejects.String())
				}
			}
			if sum.Lines != 12 || sum.Products != 4 || sum.Unusable != 7 || sum.Duplicates != 2 || sum.SKUs != 1 || sum.Skipped != 2 {
				t.Errorf("summary %+v", sum)
			}
			products := readLines(t, filepath.Join(opts.Out, "products.ndjson"))
			var subjects []string
			for _, l := range products {
				var p domain.Product
				if err := json.Unmarshal([]byte(l), &p); err != nil {
					t.Fatal(err)
				}
				subjects = append(subjects, p.Identifiers[0])
			}
			want := "gtin:03017620422003 internal_sku:off-3017620422004 gtin:05449000179661 gtin:00000096385074"
			if strings.Join(subjects, " ") != want {
				t.Errorf("products %v, want %s", subjects, want)
			}
			// The output passes the real ingest, strict.
			snap := filepath.Join(t.TempDir(), "snap")
			if _, err := ingest.Run(context.Background(), ingest.Options{In: opts.Out, Out: snap, Strict: true, Rejects: io.Discard}); err != nil {
				t.Fatalf("ingest --strict: %v", err)
			}
			// Each record's bytes are kept under their content hash.
			for _, l := range readLines(t, filepath.Join(opts.Out, "documents.ndjson")) {
				var d domain.Document
				json.Unmarshal([]byte(l), &d)
				b, err := os.ReadFile(openfoodfacts.DocumentPath(opts.Out, d.ContentHash))
				if err != nil || int64(len(b)) != d.Size {
					t.Errorf("document %s: %v (%d bytes)", d.ID, err, len(b))
				}
			}
		})
	}
}

func TestImportStrict(t *testing.T) {
	path := writeDump(t, messyDump, "plain")
	out := filepath.Join(t.TempDir(), "in")
	var rejects bytes.Buffer
	_, err := openfoodfacts.Import(openfoodfacts.Options{In: path, Out: out, Strict: true, Rejects: &rejects})
	if !errors.Is(err, openfoodfacts.ErrStrict) || !strings.Contains(err.Error(), path+":2: duplicate code") {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("strict failure left %s behind (%v)", out, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(out))
	if len(entries) != 0 {
		t.Errorf("strict failure left %v", entries)
	}
}

func TestImportLimitAndExistingOut(t *testing.T) {
	path := writeDump(t, messyDump, "plain")
	out := filepath.Join(t.TempDir(), "in")
	sum, err := openfoodfacts.Import(openfoodfacts.Options{In: path, Out: out, Limit: 3})
	if err != nil || sum.Lines != 3 || sum.Products != 2 {
		t.Fatalf("sum %+v, err %v", sum, err)
	}
	if _, err := openfoodfacts.Import(openfoodfacts.Options{In: path, Out: out}); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("import into an existing directory: %v", err)
	}
}

// A dump cut off in the middle of its compressed stream: what was read
// stays, and the cut is reported with the line. The dump spans several zstd
// blocks (128 KiB each), so that some are whole before the cut.
func TestImportTruncatedGzipAndZstd(t *testing.T) {
	lines := append([]string(nil), messyDump...)
	for i := 0; i < 20000; i++ {
		lines = append(lines, `{"code":"sku-`+strconv.Itoa(i)+`","last_modified_t":1700000000}`)
	}
	for _, compress := range []string{"gzip", "zstd"} {
		t.Run(compress, func(t *testing.T) {
			path := writeDump(t, lines, compress)
			b, _ := os.ReadFile(path)
			os.WriteFile(path, b[:len(b)-20], 0o644)
			var rejects bytes.Buffer
			sum, err := openfoodfacts.Import(openfoodfacts.Options{In: path, Out: filepath.Join(t.TempDir(), "in"), Rejects: &rejects, NoDocuments: true})
			if err != nil {
				t.Fatal(err)
			}
			if sum.Reasons["read error"] != 1 || sum.Products < 100 || !strings.Contains(rejects.String(), "the dump cannot be read past this line") {
				t.Errorf("summary %+v, rejects:\n%s", sum, rejects.String())
			}
		})
	}
}

func TestGenerate(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl.gz")
	sa, err := openfoodfacts.Generate(openfoodfacts.GenOptions{Records: 3000, Seed: 3, Out: a})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := openfoodfacts.Generate(openfoodfacts.GenOptions{Records: 3000, Seed: 3, Out: b}); err != nil {
		t.Fatal(err)
	}
	plain, _ := os.ReadFile(a)
	f, _ := os.Open(b)
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	unzipped, _ := io.ReadAll(z)
	if !bytes.Equal(plain, unzipped) {
		t.Fatal("the same seed gave different records")
	}
	c := filepath.Join(dir, "c.jsonl")
	openfoodfacts.Generate(openfoodfacts.GenOptions{Records: 3000, Seed: 4, Out: c})
	if other, _ := os.ReadFile(c); bytes.Equal(plain, other) {
		t.Fatal("another seed gave the same records")
	}
	if sa.Broken == 0 || sa.Duplicates == 0 || sa.NoGTIN == 0 || sa.BadCodes == 0 {
		t.Errorf("the generator wrote no mess: %+v", sa)
	}
	// Its output imports, counting each kind of mess, and ingests strict.
	out := filepath.Join(dir, "in")
	sum, err := openfoodfacts.Import(openfoodfacts.Options{In: a, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Reasons["not valid JSON"] != sa.Broken || sum.Reasons["code fits no identifier"] != sa.BadCodes || sum.Skipped == 0 {
		t.Errorf("import %+v of generated %+v", sum, sa)
	}
	if sum.Duplicates == 0 || sum.Duplicates > sa.Duplicates || sum.Products+sum.Unusable != 3000 {
		t.Errorf("import %+v of generated %+v", sum, sa)
	}
	if _, err := ingest.Run(context.Background(), ingest.Options{In: out, Out: filepath.Join(dir, "snap"), Strict: true, Rejects: io.Discard}); err != nil {
		t.Fatalf("ingest --strict of the generated dump: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(plain))
	sc.Buffer(nil, 1<<20)
	lines := 0
	for sc.Scan() {
		lines++
	}
	if lines != 3000 {
		t.Errorf("%d lines", lines)
	}
}

// The import reads a dump that begins with a UTF-8 byte order mark as pds
// ingest reads its input, and warns, line by line, of what it reads in a
// way the dump did not say: text that is not UTF-8 (each bad byte becomes
// U+FFFD) and a code with a GTIN's digits but a wrong check digit (it
// becomes an internal SKU). Warnings are counted, never stop a --strict
// import, and what is written passes pds ingest --strict.
func TestImportWarnsOfTextAndCheckDigits(t *testing.T) {
	tests := []struct {
		name    string
		lines   []string
		warns   []string // each a line of the report, after the dump's name
		bom     bool
		utf8    int64
		digits  int64
		subject string // of the first product
		holds   string // somewhere in products.ndjson or claims.ndjson
	}{
		{name: "byte order mark at the start",
			lines: []string{"\xef\xbb\xbf" + `{"code":"3017620422003","brands":"Nutella","last_modified_t":1700000000}`},
			bom:   true, subject: "gtin:03017620422003"},
		{name: "byte order mark on a later line is no record",
			lines: []string{`{"code":"3017620422003","brands":"B","last_modified_t":1700000000}`, "\xef\xbb\xbf" + `{"code":"96385074","brands":"B","last_modified_t":1700000000}`},
			warns: []string{":2: not a JSON object"}, subject: "gtin:03017620422003"},
		{name: "brands not UTF-8",
			lines: []string{"{\"code\":\"3017620422003\",\"brands\":\"Nut\xe9lla\",\"last_modified_t\":1700000000}"},
			warns: []string{":1: brands: invalid UTF-8 at byte 4 of the string (byte 38 of the line); replaced with U+FFFD"},
			utf8:  1, subject: "gtin:03017620422003", holds: `"manufacturer":"Nut` + "\uFFFD" + `lla"`},
		{name: "several bad places, one warning",
			lines: []string{"{\"code\":\"3017620422003\",\"brands\":\"B\",\"quantity\":\"1\xff0 g\",\"labels_tags\":[\"en:\\ud800\",\"x\xc0\"],\"last_modified_t\":1700000000}"},
			warns: []string{":1: quantity: invalid UTF-8 at byte 2 of the string (byte 51 of the line), and 2 more; replaced with U+FFFD"},
			utf8:  1, subject: "gtin:03017620422003", holds: `"value":["en:` + "\uFFFD" + `","x` + "\uFFFD" + `"]`},
		{name: "wrong check digit",
			lines:  []string{`{"code":"3017620422004","brands":"B","last_modified_t":1700000000}`},
			warns:  []string{":1: code 3017620422004 has the digits of a GTIN-13 but a wrong check digit (4, where 3 is due); imported as internal_sku:off-3017620422004"},
			digits: 1, subject: "internal_sku:off-3017620422004"},
		{name: "a code that is no GTIN at all is no wrong check digit",
			lines:   []string{`{"code":"12345","brands":"B","last_modified_t":1700000000}`},
			subject: "internal_sku:off-12345"},
	}
	for _, tt := range tests {
		for _, strict := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/strict=%v", tt.name, strict), func(t *testing.T) {
				path := writeDump(t, tt.lines, "plain")
				out := filepath.Join(t.TempDir(), "in")
				var report bytes.Buffer
				sum, err := openfoodfacts.Import(openfoodfacts.Options{In: path, Out: out, Rejects: &report, Strict: strict && tt.name != "byte order mark on a later line is no record"})
				if err != nil {
					t.Fatal(err)
				}
				var want []string
				for _, w := range tt.warns {
					want = append(want, path+w)
				}
				if got := strings.Split(strings.TrimSuffix(report.String(), "\n"), "\n"); report.Len() > 0 || len(want) > 0 {
					if strings.Join(got, "\n") != strings.Join(want, "\n") {
						t.Errorf("report:\n%s\nwant:\n%s", report.String(), strings.Join(want, "\n"))
					}
				}
				if sum.ByteOrderMark != tt.bom || sum.Replaced != tt.utf8 || sum.CheckDigits != tt.digits {
					t.Errorf("summary %+v", sum)
				}
				products := readLines(t, filepath.Join(out, "products.ndjson"))
				var p domain.Product
				if err := json.Unmarshal([]byte(products[0]), &p); err != nil || p.Identifiers[0] != tt.subject {
					t.Errorf("first product %s (%v), want %s", products[0], err, tt.subject)
				}
				written, _ := os.ReadFile(filepath.Join(out, "products.ndjson"))
				claims, _ := os.ReadFile(filepath.Join(out, "claims.ndjson"))
				if !strings.Contains(string(written)+string(claims), tt.holds) {
					t.Errorf("the output does not hold %s:\n%s%s", tt.holds, written, claims)
				}
				// The document is the record's bytes, byte order mark left out.
				var d domain.Document
				json.Unmarshal([]byte(readLines(t, filepath.Join(out, "documents.ndjson"))[0]), &d)
				kept, err := os.ReadFile(openfoodfacts.DocumentPath(out, d.ContentHash))
				if record := strings.TrimPrefix(tt.lines[0], "\xef\xbb\xbf"); err != nil || string(kept) != record {
					t.Errorf("document %q (%v), want %q", kept, err, record)
				}
				if _, err := ingest.Run(context.Background(), ingest.Options{In: out, Out: filepath.Join(t.TempDir(), "snap"), Strict: true, Rejects: io.Discard}); err != nil {
					t.Fatalf("ingest --strict: %v", err)
				}
			})
		}
	}
}
