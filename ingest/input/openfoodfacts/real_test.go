package openfoodfacts_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	pdshttp "github.com/productdata/pds/http"
	"github.com/productdata/pds/ingest"
	"github.com/productdata/pds/ingest/ingesttest"
	"github.com/productdata/pds/ingest/input/openfoodfacts"
)

// offModule is the module whose testdata holds real Open Food Facts API
// records: nobody here wrote them. It is fetched through the Go module proxy
// into the module cache, not added to go.mod, and nothing of it is committed.
const offModule = "github.com/openfoodfacts/openfoodfacts-go@v1.0.0"

// realRecords returns the module's record files, in name order.
func realRecords(t *testing.T) []string {
	t.Helper()
	cmd := exec.Command("go", "mod", "download", "-json", offModule)
	cmd.Dir = t.TempDir()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the real OFF records come from %s through the Go module proxy, and `go mod download -json %s` failed: %v\n%s%s",
			offModule, offModule, err, stderr.Bytes(), out)
	}
	var info struct{ Dir, Error string }
	if err := json.Unmarshal(out, &info); err != nil || info.Dir == "" {
		t.Fatalf("go mod download -json %s gave no module directory (%v, %s): %s", offModule, err, info.Error, out)
	}
	files, err := filepath.Glob(filepath.Join(info.Dir, "testdata", "product", "*.json"))
	if err != nil || len(files) < 30 {
		t.Fatalf("expected the real records under %s/testdata/product, found %d (%v)", info.Dir, len(files), err)
	}
	sort.Strings(files)
	return files
}

// realDump writes the records as a JSON Lines dump: each file compacted to one
// line, the way the export writes a record. The files are API answers
// ({"status":1,"code":…,"product":{…}}), which the importer reads as such.
func realDump(t *testing.T, files []string) (path string, names []string) {
	t.Helper()
	var dump bytes.Buffer
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Compact(&dump, b); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		dump.WriteByte('\n')
		names = append(names, filepath.Base(f))
	}
	path = filepath.Join(t.TempDir(), "openfoodfacts-products.jsonl")
	if err := os.WriteFile(path, dump.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, names
}

type server struct {
	url, key string
}

func (s server) get(t *testing.T, path string) map[string]any {
	t.Helper()
	req, err := http.NewRequest("GET", s.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.key)
	status, _, body, decoded := ingesttest.Send(t, req)
	if status != 200 {
		t.Fatalf("GET %s: %d %s", path, status, body)
	}
	return decoded
}

// TestRealRecords imports the real records, ingests the result with the real
// ingest (strict: a clean import has no bad line), serves the snapshot over
// loopback and checks each product's identity, passport, evidence and sources
// against the records themselves.
func TestRealRecords(t *testing.T) {
	files := realRecords(t)
	dump, names := realDump(t, files)
	in := filepath.Join(t.TempDir(), "in")
	var rejects bytes.Buffer
	retrieved := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	sum, err := openfoodfacts.Import(openfoodfacts.Options{In: dump, Out: in, Rejects: &rejects, RetrievedAt: retrieved})
	if err != nil {
		t.Fatal(err)
	}
	// Two files of the module are fragments for a decoding test (no
	// last_modified_t): unusable, and reported with file and line.
	for i, n := range names {
		if strings.HasPrefix(n, "ingredients_n_as_") {
			want := dump + ":" + strconv.Itoa(i+1) + ": no last_modified_t"
			if !strings.Contains(rejects.String(), want+"\n") {
				t.Errorf("rejects lack %q:\n%s", want, rejects.String())
			}
		}
	}
	if sum.Unusable != 2 || sum.Products != int64(len(files)-2) {
		t.Fatalf("summary %+v; want %d products, 2 unusable", sum, len(files)-2)
	}

	snap := filepath.Join(t.TempDir(), "snap")
	if _, err := ingest.Run(context.Background(), ingest.Options{In: in, Out: snap, Strict: true, Rejects: io.Discard}); err != nil {
		t.Fatalf("ingest --strict of the imported records: %v", err)
	}
	svc, secrets := ingesttest.Service(t, snap)
	srv := httptest.NewServer(pdshttp.New(svc, ingesttest.Logger(t), nil))
	t.Cleanup(srv.Close)
	s := server{url: srv.URL, key: secrets[ingesttest.KeyFull]}

	checked := 0
	for _, f := range files {
		raw, _ := os.ReadFile(f)
		var env struct {
			Product map[string]any `json:"product"`
		}
		if err := json.Unmarshal(raw, &env); err != nil {
			t.Fatal(err)
		}
		p := env.Product
		if _, ok := p["last_modified_t"]; !ok {
			continue
		}
		checked++
		t.Run(filepath.Base(f), func(t *testing.T) {
			checkProduct(t, s, in, p)
		})
	}
	if checked < 30 {
		t.Fatalf("checked %d products", checked)
	}
	checkSpotValues(t, s)
	checkSources(t, s)

	// An absent GTIN that OFF's source covers is not_found, OFF consulted.
	abs := s.get(t, "/v1/products/4006381333931")
	if abs["status"] != "not_found" || !contains(get(abs, "meta.coverage.sources_consulted"), openfoodfacts.OFFSourceID) {
		t.Errorf("absent GTIN: %v", abs)
	}
}

// checkProduct checks one product's answers against its record.
func checkProduct(t *testing.T, s server, in string, p map[string]any) {
	code := p["code"].(string)
	subject := "gtin:" + strings.Repeat("0", 14-len(code)) + code
	id := s.get(t, "/v1/products/"+subject)
	if id["status"] != "found" {
		t.Fatalf("identity: %v", id)
	}
	wantMaker := expectedManufacturer(p)
	if got := get(id, "data.manufacturer"); got != wantMaker {
		t.Errorf("manufacturer %v, want %q", got, wantMaker)
	}
	lm := int64(p["last_modified_t"].(float64))
	if got := get(id, "data.updated_at"); got != time.Unix(lm, 0).UTC().Format(time.RFC3339) {
		t.Errorf("updated_at %v, want last_modified_t %d", got, lm)
	}
	if brands, _ := p["brands"].(string); strings.TrimSpace(brands) != "" {
		if got := get(id, "data.brand"); got != strings.TrimSpace(strings.Split(brands, ",")[0]) {
			t.Errorf("brand %v, want the first of %q", got, brands)
		}
	}

	dpp := s.get(t, "/v1/products/"+subject+"/dpp")
	claims, _ := dpp["claims"].([]any)
	// A record with nothing to claim (two of them here) still has OFF's
	// quality verdicts, so a passport.
	if dpp["status"] != "found" || (len(claims) == 0 && get(p, "nutriments") != nil && len(get(p, "nutriments").(map[string]any)) > 0) {
		t.Fatalf("passport: %v", dpp)
	}
	// The passport was last updated when the record was, as identity says,
	// not when the dump was fetched.
	if got := get(dpp, "data.updated_at"); got != get(id, "data.updated_at") {
		t.Errorf("passport updated_at %v, identity %v (the record's last_modified_t)", got, get(id, "data.updated_at"))
	}
	for _, c := range claims {
		c := c.(map[string]any)
		pred := c["predicate"].(string)
		switch {
		case strings.HasSuffix(pred, "_100g"):
			if c["claim_type"] != "SOURCE ASSERTION" || get(c, "object.unit") == nil {
				t.Errorf("%s: %v", pred, c)
			}
		case pred == "nutriscore_grade" || pred == "nutriscore_score":
			wantInference(t, c, "Nutri-Score")
		case pred == "nova_group":
			wantInference(t, c, "NOVA")
		case pred == "ecoscore_grade" || pred == "ecoscore_score":
			wantInference(t, c, "Eco-Score")
		}
	}
	// OFF's own quality lists become verdicts.
	if w, _ := p["data_quality_warnings_tags"].([]any); len(w) > 0 && get(dpp, "validation.business") != "warn" {
		t.Errorf("warnings %v, validation %v", w, dpp["validation"])
	}

	ev := s.get(t, "/v1/products/"+subject+"/evidence")
	chains, _ := get(ev, "data.chains").([]any)
	if len(chains) != len(claims) {
		t.Fatalf("%d chains for %d claims", len(chains), len(claims))
	}
	for _, ch := range chains {
		claim := get(ch, "claim").(map[string]any)
		links := get(ch, "links").([]any)
		if len(links) != 1 {
			t.Fatalf("claim %v has %d links", claim["id"], len(links))
		}
		link := links[0].(map[string]any)
		pointer, _ := get(link, "locator.pointer").(string)
		if get(link, "locator.kind") != "json_pointer" || !strings.HasPrefix(pointer, "/product/") {
			t.Fatalf("locator %v", link["locator"])
		}
		hash := get(link, "document.content_hash").(string)
		doc, err := os.ReadFile(openfoodfacts.DocumentPath(in, hash))
		if err != nil {
			t.Fatalf("the record bytes of %s: %v", hash, err)
		}
		sum := sha256.Sum256(doc)
		if "sha256:"+hex.EncodeToString(sum[:]) != hash || get(link, "document.media_type") != "application/json" {
			t.Fatalf("document %v does not match its bytes", link["document"])
		}
		if get(link, "source.licence_name") != openfoodfacts.LicenceODbL {
			t.Errorf("document source %v", link["source"])
		}
		var docv any
		if err := json.Unmarshal(doc, &docv); err != nil {
			t.Fatal(err)
		}
		at, ok := resolve(docv, pointer)
		if !ok {
			t.Fatalf("pointer %s does not resolve in the record", pointer)
		}
		if !sameValue(at, get(claim, "object.value")) {
			t.Errorf("%s: the record holds %#v at %s, the claim says %#v", claim["predicate"], at, pointer, get(claim, "object.value"))
		}
	}
}

func wantInference(t *testing.T, c map[string]any, method string) {
	t.Helper()
	if c["claim_type"] != "INFERENCE" || c["method"] != method {
		t.Errorf("%s: claim_type %v method %v, want INFERENCE by %s", c["predicate"], c["claim_type"], c["method"], method)
	}
}

// expectedManufacturer is the mapping's rule, written out again: brand_owner,
// else the producer-platform owner, else producer, else the first brand.
func expectedManufacturer(p map[string]any) string {
	str := func(k string) string { s, _ := p[k].(string); return strings.TrimSpace(s) }
	if v := str("brand_owner"); v != "" {
		return v
	}
	if v := str("owner"); v != "" {
		return strings.TrimPrefix(v, "org-")
	}
	if v := str("producer"); v != "" {
		return v
	}
	if v := str("brands"); v != "" {
		return strings.TrimSpace(strings.Split(v, ",")[0])
	}
	return openfoodfacts.UnknownManufacturer
}

// checkSpotValues checks a few values read off the records by hand.
func checkSpotValues(t *testing.T, s server) {
	type want struct {
		subject, predicate string
		value              any
		unit, claimType    string
		trust, sourceKind  string
	}
	for _, w := range []want{
		// Carrefour manages this product on the producer platform; sugars is
		// one of its owner fields.
		{"gtin:03560070976867", "sugars_100g", 32.0, "g", "SOURCE ASSERTION", "L3", "publisher_endpoint"},
		{"gtin:03560070976867", "nova_group", 4.0, "", "INFERENCE", "L1", "partner_feed"},
		{"gtin:03560070976867", "nutriscore_grade", "d", "", "INFERENCE", "L1", "partner_feed"},
		// Imported from the USDA database (its sources[] entry lists the field).
		{"gtin:00737628064502", "carbohydrates_100g", 71.15, "g", "SOURCE ASSERTION", "L2", "partner_feed"},
		// Energy per 100 g is in kJ whatever unit it was entered in.
		{"gtin:00737628064502", "energy_100g", 1611.0, "kJ", "SOURCE ASSERTION", "L2", "partner_feed"},
		// Contributors' data.
		{"gtin:05449000179661", "quantity", "330 ml", "", "SOURCE ASSERTION", "L1", "partner_feed"},
	} {
		dpp := s.get(t, "/v1/products/"+w.subject+"/dpp")
		var found map[string]any
		for _, c := range dpp["claims"].([]any) {
			if c := c.(map[string]any); c["predicate"] == w.predicate {
				found = c
			}
		}
		if found == nil {
			t.Errorf("%s has no %s claim", w.subject, w.predicate)
			continue
		}
		unit, _ := get(found, "object.unit").(string)
		if !reflect.DeepEqual(get(found, "object.value"), w.value) || unit != w.unit || found["claim_type"] != w.claimType || found["trust_level"] != w.trust {
			t.Errorf("%s %s: %v", w.subject, w.predicate, found)
		}
		src := s.get(t, "/v1/sources/"+found["source_ref"].(string))
		if get(src, "data.kind") != w.sourceKind {
			t.Errorf("%s %s: source %v", w.subject, w.predicate, src["data"])
		}
	}
}

// checkSources checks the licence terms of OFF and of an import with its
// own licence.
func checkSources(t *testing.T, s server) {
	off := s.get(t, "/v1/sources/"+openfoodfacts.OFFSourceID)
	if get(off, "data.licence_name") != "ODbL-1.0" || get(off, "data.may_redistribute_derived") != true ||
		!strings.Contains(get(off, "data.attribution_required").(string), "Open Food Facts") ||
		get(off, "data.origin") != "https://world.openfoodfacts.org" || get(off, "data.operator.name") != "Open Food Facts" {
		t.Errorf("OFF source: %v", off["data"])
	}
	// 4000539770708 came partly from FoodRepo (openfood-ch) under CC BY 4.0.
	dpp := s.get(t, "/v1/products/gtin:04000539770708/dpp")
	var foodrepo map[string]any
	for _, src := range dpp["sources"].([]any) {
		if strings.Contains(get(src, "licence_name").(string), "Creative Commons Attribution 4.0") {
			foodrepo = src.(map[string]any)
		}
	}
	if foodrepo == nil || !strings.Contains(foodrepo["attribution_required"].(string), "FoodRepo") || foodrepo["may_redistribute_derived"] != true {
		t.Errorf("no FoodRepo source with its licence among %v", dpp["sources"])
	}
}

// resolve follows a JSON pointer (RFC 6901) through decoded JSON.
func resolve(v any, pointer string) (any, bool) {
	if pointer == "" {
		return v, true
	}
	for _, tok := range strings.Split(pointer[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[tok]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// sameValue compares what the record holds with what the claim says. A
// number the record writes as a string is served as the number.
func sameValue(doc, claim any) bool {
	if s, ok := doc.(string); ok {
		if f, ok := claim.(float64); ok {
			x, err := strconv.ParseFloat(strings.Replace(strings.TrimSpace(s), ",", ".", 1), 64)
			return err == nil && x == f
		}
	}
	return reflect.DeepEqual(doc, claim)
}

func get(v any, path string) any {
	for _, p := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

func contains(list any, s string) bool {
	l, _ := list.([]any)
	for _, v := range l {
		if v == s {
			return true
		}
	}
	return false
}
