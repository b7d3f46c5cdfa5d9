package main

import (
	"bytes"
	"compress/gzip"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// product is one valid products.ndjson line naming internal_sku:SKU.
func product(sku, extra string) string {
	return `{"identifiers":["internal_sku:` + sku + `"],"manufacturer":"M","trust_level":"L1","status":"active","updated_at":"2025-01-01T00:00:00Z"` + extra + "}\n"
}

// What pds ingest says about input it cannot read as
// is, each checked on the command's own output.
func TestIngestReportsInputItCannotRead(t *testing.T) {
	const party = `{"id":"aaaaaaaa-0000-4000-8000-000000000001","name":"P"}` + "\n"
	gz := func(s string) string {
		var buf bytes.Buffer
		w := gzip.NewWriter(&buf)
		w.Write([]byte(s))
		w.Close()
		return buf.String()
	}
	cases := []struct {
		name  string
		files map[string]string
		// out and errs must appear in stdout and stderr; notOut must not.
		out, errs []string
		notOut    []string
	}{
		{
			name:  "a byte order mark is skipped at the start of a file and explained elsewhere",
			files: map[string]string{"products.ndjson": "\xef\xbb\xbf" + product("A", "") + "\xef\xbb\xbf" + product("B", "")},
			out: []string{"products.ndjson 1 accepted, 1 rejected",
				"products.ndjson began with a UTF-8 byte order mark, which was skipped",
				"  took: products.ndjson ", ", views ", ", finishing ", ", manifest ", ", publish "},
			errs: []string{"products.ndjson:2: not a JSON object: the line starts with a UTF-8 byte order mark"},
		},
		{
			name:  "text that is not UTF-8 is replaced, warned of and counted",
			files: map[string]string{"products.ndjson": product("A", ",\"brand\":\"B\xe4r\"") + product("B", "")},
			out:   []string{"products.ndjson 2 accepted, 0 rejected; 1 with text that is not UTF-8, replaced with U+FFFD"},
			errs:  []string{"products.ndjson:1: brand: invalid UTF-8 at byte 2 of the string (byte 137 of the line); replaced with U+FFFD"},
		},
		{
			name:   "the summary names the gzip file that was read",
			files:  map[string]string{"products.ndjson.gz": gz(product("A", "")), "parties.ndjson.gz": gz(party)},
			out:    []string{"  products.ndjson.gz 1 accepted, 0 rejected", "  parties.ndjson.gz 1 accepted, 0 rejected"},
			notOut: []string{"  products.ndjson 1", "  parties.ndjson 1"},
		},
		{
			name: "a duplicate names the earlier line",
			files: map[string]string{"products.ndjson": product("A", "") + product("B", "") + product("A", ""),
				"parties.ndjson": party + party},
			errs: []string{"products.ndjson:3: identifier internal_sku:A already names product internal_sku:A (line 1)",
				"parties.ndjson:2: id aaaaaaaa-0000-4000-8000-000000000001 is already used by line 1"},
		},
		{
			name: "unknown members are counted and named per file",
			files: map[string]string{"products.ndjson": product("A", `,"name":"Crisps"`) + product("B", "") + product("C", `,"colour":"red","name":"Dip"`),
				"parties.ndjson": `{"id":"aaaaaaaa-0000-4000-8000-000000000001","name":"P","country":"NL"}` + "\n"},
			out: []string{"products.ndjson 3 accepted, 0 rejected; 2 with members ingest does not read, ignored (name, colour)",
				"parties.ndjson 1 accepted, 0 rejected; 1 with members ingest does not read, ignored (country)"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := t.TempDir()
			for name, body := range c.files {
				if err := os.WriteFile(filepath.Join(in, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			code, out, errOut := runCmd("ingest", "--in", in, "--out", filepath.Join(t.TempDir(), "snap"), "--quiet")
			if code != 0 {
				t.Fatalf("exit %d\n%s%s", code, out, errOut)
			}
			for _, want := range c.out {
				if !strings.Contains(out, want) {
					t.Errorf("stdout lacks %q:\n%s", want, out)
				}
			}
			for _, bad := range c.notOut {
				if strings.Contains(out, bad) {
					t.Errorf("stdout has %q:\n%s", bad, out)
				}
			}
			for _, want := range c.errs {
				if !strings.Contains(errOut, want) {
					t.Errorf("stderr lacks %q:\n%s", want, errOut)
				}
			}
		})
	}
}

func TestRoundDuration(t *testing.T) {
	tests := []struct {
		in   time.Duration
		want string
	}{
		{0, "0s"},
		{1234 * time.Nanosecond, "1µs"},
		{420 * time.Microsecond, "420µs"},
		{999499 * time.Nanosecond, "999µs"},
		{1500 * time.Microsecond, "2ms"},
		{26 * time.Millisecond, "26ms"},
		{1440 * time.Millisecond, "1.4s"},
		{162*time.Second + 460*time.Millisecond, "2m42.5s"},
	}
	for _, tt := range tests {
		if got := roundDuration(tt.in).String(); got != tt.want {
			t.Errorf("roundDuration(%v) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

// SOURCE_DATE_EPOCH is a whole number of seconds; anything else is refused
// with the value named, and unset is no time.
func TestSourceDateEpoch(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want time.Time
		err  bool
	}{
		{"", time.Time{}, false},
		{"0", time.Unix(0, 0).UTC(), false},
		{"1767225600", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), false},
		{"1767225600.5", time.Time{}, true},
		{"-1", time.Time{}, true},
		{"tomorrow", time.Time{}, true},
	} {
		got, err := sourceDateEpoch(tc.v)
		if (err != nil) != tc.err || !got.Equal(tc.want) {
			t.Errorf("%q: %v %v, want %v (error %v)", tc.v, got, err, tc.want, tc.err)
		}
		if err != nil && !strings.Contains(err.Error(), tc.v) {
			t.Errorf("%q: the error does not name the value: %v", tc.v, err)
		}
	}
}

// A night on a base whose kept records have a byte flipped in their largest
// table, with a change set that reads them, ends with one line on stderr
// that names the file and says to build whole, status 1, nothing logged
// (no Pebble report, no stack), and nothing left beside --out: found by the
// read that meets it, or before the night starts with --check-base-whole.
func TestIngestOnADamagedBaseSaysWhatToDo(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base")
	if code, _, errOut := runCmd("ingest", "--in", "../../sample-input", "--out", base, "--keep-records", "--quiet"); code != 0 {
		t.Fatalf("ingest of the base: exit %d: %s", code, errOut)
	}
	tables, err := filepath.Glob(filepath.Join(base+".records", "*.sst"))
	if err != nil || len(tables) == 0 {
		t.Fatalf("no tables in the records: %v", err)
	}
	largest, size := "", int64(-1)
	for _, p := range tables {
		if st, err := os.Stat(p); err == nil && st.Size() > size {
			largest, size = p, st.Size()
		}
	}
	b, err := os.ReadFile(largest)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(largest, b, 0o644); err != nil {
		t.Fatal(err)
	}
	// Every document changed: the night reads every product citing one.
	docs, err := os.ReadFile("../../sample-input/documents.ndjson")
	if err != nil {
		t.Fatal(err)
	}
	changes := filepath.Join(dir, "changes")
	os.Mkdir(changes, 0o755)
	os.WriteFile(filepath.Join(changes, "products.ndjson"), nil, 0o644)
	os.WriteFile(filepath.Join(changes, "documents.ndjson"), bytes.ReplaceAll(docs, []byte(`"https:`), []byte(`"http:`)), 0o644)
	var logged bytes.Buffer
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.NewTextHandler(&logged, nil)))
	out := filepath.Join(dir, "next")
	for _, c := range []struct {
		flags []string
		says  string
	}{
		{nil, "the kept records are damaged: "},
		{[]string{"--check-base-whole"}, "pds ingest: --base: "},
	} {
		args := append([]string{"ingest", "--in", changes, "--out", out, "--base", base, "--quiet"}, c.flags...)
		code, _, errOut := runCmd(args...)
		if code != 1 {
			t.Errorf("%v: exit %d, want 1", c.flags, code)
		}
		line := strings.TrimSuffix(errOut, "\n")
		for _, want := range []string{"pds ingest: ", c.says, filepath.Base(largest), "without --base"} {
			if !strings.Contains(line, want) {
				t.Errorf("%v: stderr does not say %q: %q", c.flags, want, errOut)
			}
		}
		if strings.Contains(line, "\n") || logged.Len() > 0 {
			t.Errorf("%v: more than one line of error:\nstderr: %s\nlog: %s", c.flags, errOut, logged.String())
		}
		entries, _ := os.ReadDir(dir)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if strings.Join(names, " ") != "base base.records changes" {
			t.Errorf("%v: left beside the build: %v", c.flags, names)
		}
	}
}
