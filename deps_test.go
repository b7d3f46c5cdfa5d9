package pds_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImports holds the layering rules, each with the reason it exists. A
// rule names what a package may not import itself (direct) or may not have
// anywhere among its dependencies (transitive, test files not counted), or
// that it uses the standard library only. A path ending in "/..." stands for
// that package and every package below it; any other path for itself only.
func TestImports(t *testing.T) {
	engines := []string{"github.com/cockroachdb/pebble/...", "github.com/blevesearch/bleve/..."}
	rules := []struct {
		pkgs       []string
		direct     []string
		transitive []string
		stdOnly    bool
		why        string
	}{
		{pkgs: []string{"http", "mcp", "http/httpwire", "resolver"}, direct: engines,
			why: "a transport reaches storage only through service; kv and index turn Pebble and Bleve errors into domain errors, so a transport only maps those to its wire form"},
		{pkgs: []string{"http", "mcp", "http/httpwire", "http/httpfront", "service", "resolver"}, transitive: modPaths("ingest/..."),
			why: "the server only reads snapshots; building and importing them is the offline tools' job (ingest, import off, gen, all under ingest/), and none of their code belongs in what serves"},
		{pkgs: adapters, direct: modPaths(append([]string{"service", "http/...", "mcp/...", "resolver", "ingest", "snapshots/...", "export"}, adapters...)...),
			why: "an adapter translates one outside thing (Pebble, Bleve, the keys file, a quota file, Open Food Facts' dump) into domain types; one that imported another adapter, or service for a type, would tie two outside things together and hide the data flow, so shared types live in domain"},
		{pkgs: []string{"http/httpwire"}, direct: modPaths("service"),
			why: "httpwire maps domain errors and limits to HTTP for both transports; it takes what it needs as domain types and small interfaces, so that it never depends on how operations are run"},
		{pkgs: []string{"service"}, transitive: modPaths("http/...", "mcp/...", "resolver", "snapshots/fleet"),
			why: "every operation is implemented once, below both transports; an operation that knew a transport would let that transport's wire form leak into the other; and serving reads a snapshot that is already in place, never how it was shipped"},
		{pkgs: []string{"domain", "domain/gs1"}, stdOnly: true,
			why: "domain is the vocabulary every package shares, and gs1 the identifier syntax that ingest and serving judge with the same code: neither may bring a storage engine or a transport into any of them"},
		{pkgs: []string{"snapshots/delta"}, stdOnly: true,
			why: "a delta is bytes against bytes: the algorithm knows nothing of snapshots, storage or compression, so it can be fuzzed alone and replaced alone"},
		{pkgs: []string{"cmd/pds"}, transitive: append([]string{"testing"}, modPaths("ingest/ingesttest")...),
			why: "test code stays out of the binary that ships: test helpers belong in _test.go files and ingest/ingesttest, which only tests import"},
		{pkgs: []string{"cmd/pds"}, direct: []string{"net/http"},
			why: "cmd wires packages together and never speaks HTTP itself: httpfront owns the server, its connections, timeouts and limits, and the http package the handler; since that package is also named http a mistake would hide behind an alias"},
		{pkgs: []string{"http/httpfront"}, transitive: append(modPaths("http", "mcp/...", "service/...", "kv", "index"), engines...),
			why: "httpfront serves any http.Handler and answers nothing itself: every answer on both paths is the handler's, so its lane cannot grow a shortcut around authentication, limits, logs and metrics, and a request gets the same answer with or without the lane"},
	}
	for _, r := range rules {
		for _, pkg := range r.pkgs {
			for _, imp := range goList(t, pkg, false) {
				for _, f := range r.direct {
					if matches(imp.path, f) {
						t.Errorf("%s imports %s, but %s", pkg, imp.path, r.why)
					}
				}
			}
			for _, dep := range goList(t, pkg, true) {
				if r.stdOnly && !dep.std && dep.path != mod+pkg {
					t.Errorf("%s depends on %s and must use only the standard library: %s", pkg, dep.path, r.why)
				}
				for _, f := range r.transitive {
					if dep.path != mod+pkg && matches(dep.path, f) {
						t.Errorf("%s depends on %s, but %s", pkg, dep.path, r.why)
					}
				}
			}
		}
	}
}

const mod = "github.com/productdata/pds/"

// matches reports whether import path p is named by f: f itself, or, when f
// ends in "/...", that package or any below it.
func matches(p, f string) bool {
	if base, ok := strings.CutSuffix(f, "/..."); ok {
		return p == base || strings.HasPrefix(p, base+"/")
	}
	return p == f
}

// adapters are the packages that translate one outside thing into domain
// types (export the other way: domain types into a Parquet file). scratch is
// not one: it is the offline tools' external sort, which ingest and the Open
// Food Facts importer both use.
var adapters = []string{"kv", "index", "service/keys", "service/quota", "ingest/input/openfoodfacts", "internal/metrics", "export"}

// modPaths returns the import paths of packages of this module.
func modPaths(pkgs ...string) []string {
	out := make([]string, len(pkgs))
	for i, p := range pkgs {
		out[i] = mod + p
	}
	return out
}

// layers lists the module's packages from the bottom up. A package may
// import only packages of lower layers, so the import graph has no arrow
// upward and none sideways within a layer: the folder list reads as the data
// flow, input to snapshot to answers. Every package of the module is in one
// layer, so a new package is placed on purpose.
var layers = []struct {
	name string
	pkgs []string
	why  string
}{
	{"vocabulary and tools", []string{"domain", "domain/gs1", "domain/gs1/internal/aigen", "snapshots/delta", "snapshots/internal/snapshottest", "ingest/jsonutf8", "http/openapi",
		"internal/osfile", "internal/pebbleutil", "kv/jsonshape", "internal/buildinfo", "internal/progress", "internal/metrics", "internal/fuzzseed", "internal/flood"},
		"what every layer may use: the domain types, identifier syntax, and small helpers that know nothing of pds's layers"},
	{"adapters", []string{"kv", "index", "service/keys", "service/quota", "ingest/records", "ingest/scratch"},
		"each turns one outside thing (Pebble, Bleve, a keys or quota file, a scratch sort) into domain types"},
	{"snapshot format", []string{"snapshots"},
		"the one owner of a snapshot's layout, manifest, signature and how it is opened"},
	{"trust", []string{"snapshots/trust"},
		"who may sign builds and how long what they signed holds: roots, statements and their checks; it knows the format, not how builds travel"},
	{"building, shipping and operations", []string{"ingest", "ingest/input/synthetic", "ingest/input/openfoodfacts", "snapshots/fleet", "service", "export"},
		"the offline tools build snapshots, the fleet ships them, service answers from one; none of them knows another"},
	{"test support", []string{"ingest/ingesttest"},
		"the builds tests share: real snapshots from the real ingest, keys, an S3 server; only tests import it"},
	{"the HTTP wire", []string{"http/httpwire"},
		"how both transports show domain errors and limits on HTTP"},
	{"transports", []string{"http", "http/httpfront", "mcp", "mcp/stdio", "resolver"},
		"each maps service's results to its wire form, once; httpfront serves any handler and imports none"},
	{"the binary", []string{"cmd/pds", "scripts/bench/baseline", "scripts/bench/changeinput", "scripts/bench/exportidentity", "scripts/bench/flood", "scripts/bench/offdelta", "scripts/bench/searchbench"},
		"cmd wires the layers together and owns flags; the benchmark programs are binaries of their own"},
	{"the module's own tests", []string{""}, "the root package holds only these rules and the docs' tests"},
}

// TestLayersImportDownward holds that every import inside the module goes to
// a lower layer (test files not counted).
func TestLayersImportDownward(t *testing.T) {
	rank := map[string]int{}
	for i, l := range layers {
		for _, p := range l.pkgs {
			rank[strings.TrimSuffix(mod+p, "/")] = i
		}
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		from, ok := rank[f[0]]
		if !ok {
			t.Errorf("%s is in no layer: add it to layers in deps_test.go, below everything that imports it", f[0])
			continue
		}
		for _, imp := range f[1:] {
			if to, ok := rank[imp]; ok && to >= from {
				t.Errorf("%s (%s) imports %s (%s): an import must go to a lower layer (%s)", f[0], layers[from].name, imp, layers[to].name, layers[to].why)
			}
		}
	}
}

type goPkg struct {
	path string
	std  bool
}

// goList lists what package pkg (a path in this module) imports, or with
// deps every package it depends on, itself included; test files are not
// counted.
func goList(t *testing.T, pkg string, deps bool) []goPkg {
	t.Helper()
	args := []string{"list", "-f", `{{range .Imports}}{{.}}{{"\n"}}{{end}}`, "./" + pkg}
	if deps {
		args = []string{"list", "-deps", "-f", "{{.ImportPath}} {{.Standard}}", "./" + pkg}
	}
	out, err := exec.Command("go", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	var pkgs []goPkg
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, std, _ := strings.Cut(line, " ")
		if path != "" {
			pkgs = append(pkgs, goPkg{path: path, std: std == "true"})
		}
	}
	return pkgs
}

// TestSnapshotLayoutNamedOnce holds that no package but snapshots spells a
// path inside a snapshot: the layout has one owner, so that a change of it
// is a change of one package. It looks at the string literals of every
// non-test Go file outside snapshots/.
func TestSnapshotLayoutNamedOnce(t *testing.T) {
	layout := []string{"store", "index", "points", "chunks", "manifest.json", "manifest.json.minisig"}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (p == "snapshots" || strings.HasPrefix(d.Name(), ".") && p != "." || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			v, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			for _, name := range layout {
				if v == name || strings.HasPrefix(v, name+"/") {
					t.Errorf("%s spells %q, a path inside a snapshot: ask package snapshots for it", fset.Position(lit.Pos()), v)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
