package ingest_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/productdata/pds/ingest"
	"github.com/productdata/pds/kv"
	"github.com/productdata/pds/snapshots"
)

// Every string of every line, at any depth, must be Unicode text. --strict
// refuses a line that is not, naming file, line, member and byte; otherwise
// the line is read with each bad byte (or unpaired surrogate escape) replaced
// by U+FFFD, a warning names the same, and the summary counts the line.
// Whatever the input, every view the build writes is valid UTF-8 JSON.
func TestTextThatIsNotUTF8IsRefusedOrReplaced(t *testing.T) {
	const src = "11111111-0000-4000-8000-000000000001"
	source := `{"id":"` + src + `","kind":"registry","origin":"https://x","trust_tier":2,"licence_name":"CC0","may_redistribute_verbatim":true,"may_redistribute_derived":true,"covers":{"namespaces":["gtin"]}}` + "\n"
	product := func(manufacturer, extra string) string {
		return `{"identifiers":["gtin:09520123456788"],"manufacturer":"` + manufacturer + `","trust_level":"L1","status":"active","updated_at":"2025-01-01T00:00:00Z"` + extra + "}\n"
	}
	claim := func(id, value, unit string) string {
		return `{"id":"` + id + `","subject":"gtin:09520123456788","predicate":"p` + id + `","object":{"value":` + value + `,"unit":"` + unit + `"},"claim_type":"FACT","source_ref":"` + src + `","trust_level":"L2","retrieved_at":"2025-01-01T00:00:00Z"}` + "\n"
	}
	document := func(url string) string {
		return `{"id":"d1","source_id":"` + src + `","media_type":"text/html","url":"` + url + `","content_hash":"sha256:0000000000000000000000000000000000000000000000000000000000000001","size":1,"retrieved_at":"2025-01-01T00:00:00Z"}` + "\n"
	}
	const evidence = `{"id":"e1","claim_id":"c1","document_id":"d1","locator":{"kind":"json_pointer","pointer":"/a"}}` + "\n"
	clean := map[string]string{
		"sources.ndjson":   source,
		"products.ndjson":  product("M", ""),
		"claims.ndjson":    claim("c1", `"ok"`, "g"),
		"documents.ndjson": document("https://x/1"),
		"evidence.ndjson":  evidence,
	}
	with := func(file, body string) map[string]string {
		files := map[string]string{}
		for k, v := range clean {
			files[k] = v
		}
		files[file] = body
		return files
	}
	var many strings.Builder
	for i := range 1003 {
		many.WriteString(claim(fmt.Sprint("c", i+1), "\"\xff\"", "g"))
	}
	tests := []struct {
		name  string
		files map[string]string
		// where is the message of the first bad line (after "file:line: ").
		file, where string
		line        int
		// replaced is the count of lines replaced in file when not strict,
		// rejected the count of lines rejected then.
		replaced, rejected int64
		// served must be in some view when not strict.
		served string
	}{
		{name: "claim value", files: with("claims.ndjson", claim("c1", "\"ab\xc3(\"", "g")),
			file: "claims.ndjson", line: 1, where: "object.value: invalid UTF-8 at byte 3 of the string (byte 83 of the line)",
			replaced: 1, served: `"value":"ab` + "\uFFFD" + `("`},
		{name: "claim value nested in objects and arrays", files: with("claims.ndjson", claim("c1", "{\"a\":[1,{\"b\":\"x\xe2\x82\"}]}", "g")),
			file: "claims.ndjson", line: 1, where: "object.value.a[1].b: invalid UTF-8 at byte 2 of the string (byte 95 of the line), and 1 more",
			replaced: 1, served: `{"a":[1,{"b":"x` + "\uFFFD\uFFFD" + `"}]}`},
		{name: "manufacturer", files: with("products.ndjson", product("M\xfcller", "")),
			file: "products.ndjson", line: 1, where: "manufacturer: invalid UTF-8 at byte 2 of the string (byte 57 of the line)",
			replaced: 1, served: `"manufacturer":"M` + "\uFFFD" + `ller"`},
		{name: "name of a member ingest does not read", files: with("products.ndjson", product("M", ",\"n\xe4me\":\"x\"")),
			file: "products.ndjson", line: 1, where: "member name: invalid UTF-8 at byte 2 of the string (byte 134 of the line)",
			replaced: 1},
		{name: "unpaired surrogate escape", files: with("claims.ndjson", claim("c1", `"ok"`, `g\ud800`)),
			file: "claims.ndjson", line: 1, where: `object.unit: escape \ud800 is half of a UTF-16 surrogate pair without the other half at byte 2 of the string (byte 94 of the line)`,
			replaced: 1, served: `"unit":"g` + "\uFFFD" + `"`},
		{name: "document url", files: with("documents.ndjson", document("https://x/\xc0")),
			file: "documents.ndjson", line: 1, where: "url: invalid UTF-8 at byte 11 of the string (byte 105 of the line)",
			replaced: 1, served: `"url":"https://x/` + "\uFFFD" + `"`},
		{name: "a line refused for another reason is not counted as replaced", files: with("products.ndjson", product("M", "")+`{"identifiers":["internal_sku:A`+"\xff"+`"],"manufacturer":"M","trust_level":"L1","status":"active","updated_at":"2025-01-01T00:00:00Z"}`+"\n"),
			file: "products.ndjson", line: 2, where: "identifiers[0]: invalid UTF-8 at byte 15 of the string (byte 32 of the line)",
			rejected: 1},
		{name: "more lines than are shown", files: with("claims.ndjson", many.String()),
			file: "claims.ndjson", line: 1, where: "object.value: invalid UTF-8 at byte 1 of the string (byte 81 of the line)",
			replaced: 1003, served: `"value":"` + "\uFFFD" + `"`},
	}
	for _, tt := range tests {
		in := t.TempDir()
		for name, body := range tt.files {
			if err := os.WriteFile(filepath.Join(in, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Run(tt.name+"/strict", func(t *testing.T) {
			_, _, rejects, err := build(t, in, true)
			want := fmt.Sprintf("%s:%d: %s", tt.file, tt.line, tt.where)
			if !errors.Is(err, ingest.ErrStrict) || !strings.Contains(err.Error(), want) || rejects != want+"\n" {
				t.Errorf("err %v\nrejects %q\nwant %q", err, rejects, want)
			}
		})
		t.Run(tt.name, func(t *testing.T) {
			out, sum, stderr, err := build(t, in, false)
			if err != nil {
				t.Fatal(err)
			}
			if sum.Replaced[tt.file] != tt.replaced || sum.Rejected[tt.file] != tt.rejected {
				t.Errorf("replaced %v, rejected %v", sum.Replaced, sum.Rejected)
			}
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			if tt.rejected > 0 {
				// the reject says why, and nothing else is said
				if len(lines) != 1 || !strings.HasPrefix(lines[0], fmt.Sprintf("%s:%d: identifiers[0] ", tt.file, tt.line)) {
					t.Errorf("stderr %q", stderr)
				}
			} else if first := fmt.Sprintf("%s:%d: %s; replaced with U+FFFD", tt.file, tt.line, tt.where); lines[0] != first {
				t.Errorf("stderr begins %q, want %q", lines[0], first)
			}
			if tt.replaced > 1000 {
				if len(lines) != 1001 || lines[1000] != tt.file+": further lines with text that is not UTF-8 are counted, not shown" {
					t.Errorf("%d lines on stderr, the last %q", len(lines), lines[len(lines)-1])
				}
			}
			views := checkViewsUTF8JSON(t, out)
			if tt.served != "" && !strings.Contains(views, tt.served) {
				t.Errorf("no view holds %s:\n%s", tt.served, views)
			}
		})
	}
}

// checkViewsUTF8JSON fails the test for each view of the snapshot that is
// not valid UTF-8 JSON, and returns them all.
func checkViewsUTF8JSON(t *testing.T, snap string) string {
	t.Helper()
	st, err := kv.Open(filepath.Join(snap, "store"), 1<<20, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.UsePoints(filepath.Join(snap, snapshots.PointsPath), nil); err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	for _, tag := range []byte{kv.TagIdentity, kv.TagPassport, kv.TagEvidence} {
		err := st.Scan(tag, func(k, v []byte) error {
			vw, err := kv.DecodeView(v)
			if err != nil {
				return err
			}
			body := vw.Body
			if tag != kv.TagIdentity { // the members of an envelope
				body = []byte("{" + string(body) + "}")
			}
			for _, j := range [][]byte{body, vw.Coverage} {
				if len(j) > 0 && (!utf8.Valid(j) || !json.Valid(j)) {
					t.Errorf("view %c %q is not UTF-8 JSON: %q", tag, k, j)
				}
			}
			all.Write(body)
			all.WriteByte('\n')
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return all.String()
}
