package export

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/ingest/ingesttest"
	"github.com/productdata/pds/service"
	"github.com/productdata/pds/snapshots"
)

// The bundled sample, built by the real ingest and exported, read back with
// DuckDB: one row for every product the API finds for a caller without a
// tenant and none for any other, and each row holds what the API answers
// for its product: identity, passport status, attributes with units (typed
// columns and other_attributes together), verdicts, the sources cited with
// their attribution, and the sources whose claims were withheld for their
// licence. The file's metadata lists the sources with their licences and
// the attribution texts.
func TestExportMatchesTheAPI(t *testing.T) {
	snapDir := ingesttest.Build(t, filepath.Join(ingesttest.Root(), "sample-input"))
	file := filepath.Join(t.TempDir(), "products.parquet")
	exportSnapshot(t, snapDir, file)
	svc, _ := ingesttest.Service(t, snapDir)

	rows := duckdb(t, "SELECT * FROM read_parquet('"+file+"') ORDER BY subject")
	bySubject := map[string]map[string]any{}
	var order []string
	for _, r := range rows {
		s := r["subject"].(string)
		bySubject[s] = r
		order = append(order, s)
	}
	if !slices.IsSorted(order) || len(bySubject) != len(rows) {
		t.Fatalf("the rows' subjects are not distinct and sorted")
	}

	public, private := 0, 0
	for _, p := range sampleProducts(t) {
		id := api(t, svc.Identity, p.Identifiers[0])
		if id["status"] != domain.StatusFound {
			if p.Tenant == "" {
				t.Fatalf("the API does not find public product %s: %v", p.Identifiers[0], id)
			}
			private++
			continue
		}
		public++
		data := id["data"].(map[string]any)
		subject := data["subject"].(string)
		row, ok := bySubject[subject]
		if !ok {
			t.Fatalf("%s: the API finds it, the file has no row for it", subject)
		}
		delete(bySubject, subject)
		checkIdentity(t, row, data)
		checkPassport(t, row, api(t, svc.Passport, subject))
	}
	if len(bySubject) > 0 {
		t.Fatalf("%d rows for products the API does not find for the public, such as %v", len(bySubject), mapsKeys(bySubject)[:1])
	}
	if public == 0 || private == 0 || len(rows) != public {
		t.Fatalf("%d rows, %d public and %d private products in the sample; want a row for each public one, and both kinds", len(rows), public, private)
	}

	checkLicenceCases(t, rows)
	checkMetadata(t, file, rows)
}

// checkLicenceCases makes sure the sample exercised withholding: a passport
// shown with claims withheld, and one withheld whole (unknown,
// LICENCE_RESTRICTED).
func checkLicenceCases(t *testing.T, rows []map[string]any) {
	t.Helper()
	partly, whole := 0, 0
	for _, r := range rows {
		if len(r["sources_withheld"].([]any)) == 0 {
			continue
		}
		switch {
		case r["passport_status"] == domain.StatusFound:
			partly++
		case r["passport_status"] == domain.StatusUnknown && r["passport_reason"] == domain.ReasonLicenceRestricted:
			whole++
		}
	}
	if partly == 0 || whole == 0 {
		t.Fatalf("the sample gave %d passports with claims withheld and %d withheld whole; the test needs both", partly, whole)
	}
}

// checkMetadata compares the file's key-value metadata with the rows: every
// source cited or withheld is listed with its licence and its counts, and
// the attribution text of every source cited.
func checkMetadata(t *testing.T, file string, rows []map[string]any) {
	t.Helper()
	meta := map[string]string{}
	for _, kv := range duckdb(t, "SELECT decode(key) AS key, decode(value) AS value FROM parquet_kv_metadata('"+file+"')") {
		meta[kv["key"].(string)] = kv["value"].(string)
	}
	var sources []SourceUse
	if err := json.Unmarshal([]byte(meta[MetaSources]), &sources); err != nil {
		t.Fatalf("%s: %v: %q", MetaSources, err, meta[MetaSources])
	}
	cited, withheld := map[string]int64{}, map[string]int64{}
	texts := map[string]bool{}
	for _, r := range rows {
		for _, id := range r["source_ids"].([]any) {
			cited[id.(string)]++
		}
		for _, id := range r["sources_withheld"].([]any) {
			withheld[id.(string)]++
		}
		for _, a := range r["attribution"].([]any) {
			texts[a.(string)] = true
		}
	}
	listed := map[string]bool{}
	for _, s := range sources {
		listed[s.ID] = true
		if s.Rows != cited[s.ID] || s.RowsWithheld != withheld[s.ID] {
			t.Errorf("%s lists source %s as cited by %d rows and withheld from %d; the rows say %d and %d", MetaSources, s.ID, s.Rows, s.RowsWithheld, cited[s.ID], withheld[s.ID])
		}
		if s.RowsWithheld > 0 && (s.MayRedistributeDerived || s.MayRedistributeVerbatim) {
			t.Errorf("source %s was withheld, but its licence permits redistribution", s.ID)
		}
		if s.Rows > 0 && !s.MayRedistributeDerived && !s.MayRedistributeVerbatim {
			t.Errorf("source %s is cited by %d rows, but its licence permits no redistribution", s.ID, s.Rows)
		}
		if s.LicenceName == "" {
			t.Errorf("source %s is listed without its licence", s.ID)
		}
	}
	for id := range cited {
		if !listed[id] {
			t.Errorf("source %s is cited by rows but not in %s", id, MetaSources)
		}
	}
	for id := range withheld {
		if !listed[id] {
			t.Errorf("source %s is withheld from rows but not in %s", id, MetaSources)
		}
	}
	for text := range texts {
		if !slices.Contains(strings.Split(meta[MetaAttribution], "\n"), text) {
			t.Errorf("%s leaves out %q, which rows need", MetaAttribution, text)
		}
	}
	if len(texts) == 0 || meta[MetaBuildID] == "" || meta[MetaLicence] == "" {
		t.Errorf("the metadata lacks attribution texts, the build id or the licence note: %v", meta)
	}
}

// exportSnapshot writes the snapshot at dir to file as pds export does.
func exportSnapshot(t *testing.T, dir, file string) {
	t.Helper()
	snap, err := service.OpenSnapshot(dir, snapshots.OpenOptions{CacheBytes: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := bufio.NewWriter(f)
	w := NewWriter(buf, Options{BuildID: snap.Manifest.BuildID, CreatedAt: snap.Manifest.CreatedAt, Sources: snap.Sources, Version: "test"})
	if err := snap.EachPublicProduct(context.Background(), w.Write); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := buf.Flush(); err != nil {
		t.Fatal(err)
	}
}

// api answers identifier with op (Identity or Passport) for a caller
// without a tenant, and returns the envelope.
func api(t *testing.T, op func(context.Context, domain.Caller, service.ProductArgs) (*service.Result, error), identifier string) map[string]any {
	t.Helper()
	res, err := op(context.Background(), service.Public(), service.ProductArgs{Identifier: &identifier})
	if err != nil {
		t.Fatalf("%s: %v", identifier, err)
	}
	defer res.Release()
	var env map[string]any
	if err := json.Unmarshal(res.AppendEnvelope(nil, "req_test", 0), &env); err != nil {
		t.Fatal(err)
	}
	return env
}

func checkIdentity(t *testing.T, row, data map[string]any) {
	t.Helper()
	for _, m := range []string{"subject", "identifiers", "manufacturer", "manufacturer_gln", "brand", "trust_level", "status", "updated_at", "has_passport"} {
		if !reflect.DeepEqual(row[m], data[m]) {
			t.Errorf("%s: column %s is %v, the API answers %v", data["subject"], m, row[m], data[m])
		}
	}
	var gtin any
	for _, id := range data["identifiers"].([]any) {
		if v, ok := strings.CutPrefix(id.(string), "gtin:"); ok {
			gtin = v
			break
		}
	}
	if row["gtin"] != gtin {
		t.Errorf("%s: column gtin is %v, want %v", data["subject"], row["gtin"], gtin)
	}
}

func checkPassport(t *testing.T, row, env map[string]any) {
	t.Helper()
	subject := row["subject"]
	reason, _ := env["reason"].(string)
	if row["passport_status"] != env["status"] || row["passport_reason"] != nilIfEmpty(reason) {
		t.Errorf("%s: passport %v %v, the API answers %v %q", subject, row["passport_status"], row["passport_reason"], env["status"], reason)
	}
	attrs, units := map[string]any{}, map[string]any{}
	var updated any
	if env["status"] == domain.StatusFound {
		data := env["data"].(map[string]any)
		attrs = data["attributes"].(map[string]any)
		if u, ok := data["units"].(map[string]any); ok {
			units = u
		}
		updated = data["updated_at"]
	}
	gotAttrs, gotUnits := rowAttributes(t, row)
	if !reflect.DeepEqual(gotAttrs, attrs) {
		t.Errorf("%s: the row's attributes are %v, the API answers %v", subject, gotAttrs, attrs)
	}
	if !reflect.DeepEqual(gotUnits, units) {
		t.Errorf("%s: the row's units are %v, the API answers %v", subject, gotUnits, units)
	}
	if row["passport_updated_at"] != updated {
		t.Errorf("%s: passport_updated_at %v, the API answers %v", subject, row["passport_updated_at"], updated)
	}
	validation, _ := env["validation"].(map[string]any)
	for _, class := range []string{"technical", "business", "regulatory", "authority"} {
		want, _ := validation[class].(string)
		if row["validation_"+class] != nilIfEmpty(want) {
			t.Errorf("%s: validation_%s is %v, the API answers %q", subject, class, row["validation_"+class], want)
		}
	}
	ids, texts := []any{}, []any{}
	sources, _ := env["sources"].([]any)
	for _, s := range sources {
		s := s.(map[string]any)
		ids = append(ids, s["id"])
		if a, ok := s["attribution_required"].(string); ok && a != "" && !slices.Contains(texts, any(a)) {
			texts = append(texts, a)
		}
	}
	if !reflect.DeepEqual(row["source_ids"], ids) || !reflect.DeepEqual(row["attribution"], texts) {
		t.Errorf("%s: sources %v with attribution %v, the API answers %v with %v", subject, row["source_ids"], row["attribution"], ids, texts)
	}
	withheld := []any{}
	meta := env["meta"].(map[string]any)
	if cov, ok := meta["coverage"].(map[string]any); ok {
		skipped, _ := cov["sources_skipped"].([]any)
		for _, s := range skipped {
			if s := s.(map[string]any); s["reason"] == domain.SkipLicenceRestricted {
				withheld = append(withheld, s["id"])
			}
		}
	}
	if !reflect.DeepEqual(row["sources_withheld"], withheld) {
		t.Errorf("%s: sources_withheld %v, the API skips %v for their licence", subject, row["sources_withheld"], withheld)
	}
}

// rowAttributes puts a row's attributes and units back together from the
// attribute columns, their unit columns, other_attributes and other_units,
// in the JSON forms the API answers them in.
func rowAttributes(t *testing.T, row map[string]any) (attrs, units map[string]any) {
	t.Helper()
	attrs, units = map[string]any{}, map[string]any{}
	for p, c := range columns {
		v := row[p]
		if v == nil {
			continue
		}
		switch c.kind {
		case typeFloat, typeInt:
			v = number(t, v)
		}
		attrs[p] = v
		if c.unit >= 0 && row[p+"_unit"] != nil {
			units[p] = row[p+"_unit"]
		}
	}
	for col, into := range map[string]map[string]any{"other_attributes": attrs, "other_units": units} {
		s, ok := row[col].(string)
		if !ok {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatalf("%s of %s: %v", col, row["subject"], err)
		}
		for k, v := range m {
			if _, dup := into[k]; dup {
				t.Errorf("%s: %s is in its column and in %s", row["subject"], k, col)
			}
			into[k] = v
		}
	}
	return attrs, units
}

// number reads a number DuckDB gave as a JSON number or a string (BIGINT).
func number(t *testing.T, v any) float64 {
	switch n := v.(type) {
	case float64:
		return n
	case string:
		f, err := strconv.ParseFloat(n, 64)
		if err != nil {
			t.Fatalf("%q is not a number", n)
		}
		return f
	}
	t.Fatalf("%v (%T) is not a number", v, v)
	return 0
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func mapsKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// sampleProducts reads sample-input/products.ndjson.
func sampleProducts(t *testing.T) []domain.Product {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ingesttest.Root(), "sample-input", "products.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	var out []domain.Product
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var p domain.Product
		if err := json.Unmarshal(line, &p); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// duckdb runs one SQL statement in DuckDB (scripts/duckdb.sh installs it,
// as make tools does) and returns its rows.
func duckdb(t *testing.T, sql string) []map[string]any {
	t.Helper()
	out, err := exec.Command("bash", filepath.Join(ingesttest.Root(), "scripts", "duckdb.sh")).Output()
	if err != nil {
		t.Fatalf("scripts/duckdb.sh could not install node and DuckDB's @duckdb/node-api (%v); run 'make tools' (make test does it first): %s", err, exitStderr(err))
	}
	cmd := exec.Command("node", "query.mjs", sql)
	cmd.Dir = strings.TrimSpace(string(out))
	res, err := cmd.Output()
	if err != nil {
		t.Fatalf("DuckDB: %s: %v: %s", sql, err, exitStderr(err))
	}
	var rows []map[string]any
	if err := json.Unmarshal(res, &rows); err != nil {
		t.Fatalf("DuckDB's answer to %s: %v", sql, err)
	}
	return rows
}

func exitStderr(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(ee.Stderr)
	}
	return ""
}
