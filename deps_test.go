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
// that it uses the standard library only.
func TestImports(t *testing.T) {
	const mod = "github.com/productdata/pds/"
	engines := []string{"github.com/cockroachdb/pebble", "github.com/blevesearch/bleve"}
	rules := []struct {
		pkgs       []string
		direct     []string
		transitive []string
		stdOnly    bool
		why        string
	}{
		{pkgs: []string{"http", "mcp", "httpwire", "resolver"}, direct: engines,
			why: "a transport reaches storage only through service; kv and index turn Pebble and Bleve errors into domain errors, so a transport only maps those to its wire form"},
		{pkgs: []string{"http", "mcp", "httpwire", "service", "resolver"}, transitive: []string{mod + "ingest", mod + "openfoodfacts", mod + "scratch", mod + "records", mod + "synthetic"},
			why: "the server only reads snapshots; building and importing them is the offline tools' job (ingest, import off, gen), and none of their code belongs in what serves"},
		{pkgs: adapters, direct: modPaths(append([]string{"service", "http", "mcp", "httpwire", "resolver", "ingest", "snapshots"}, adapters...)...),
			why: "an adapter translates one outside thing (Pebble, Bleve, the keys file, a quota file, Open Food Facts' dump) into domain types; one that imported another adapter, or service for a type, would tie two outside things together and hide the data flow, so shared types live in domain"},
		{pkgs: []string{"httpwire"}, direct: []string{mod + "service"},
			why: "httpwire maps domain errors and limits to HTTP for both transports; it takes what it needs as domain types and small interfaces, so that it never depends on how operations are run"},
		{pkgs: []string{"service"}, transitive: []string{mod + "http", mod + "mcp", mod + "resolver"},
			why: "every operation is implemented once, below both transports; an operation that knew a transport would let that transport's wire form leak into the other"},
		{pkgs: []string{"domain"}, stdOnly: true,
			why: "domain is the vocabulary every package shares, so it must not bring a storage engine or a transport into any of them"},
		{pkgs: []string{"snapshots/delta"}, stdOnly: true,
			why: "a delta is bytes against bytes: the algorithm knows nothing of snapshots, storage or compression, so it can be fuzzed alone and replaced alone"},
		{pkgs: []string{"gs1"}, stdOnly: true,
			why: "ingest and serving judge identifiers with this same code, which is pure syntax with nothing to open or configure"},
		{pkgs: []string{"cmd/pds"}, transitive: []string{"testing", mod + "internal/fixture"},
			why: "test code stays out of the binary that ships: test helpers belong in _test.go files and internal/fixture, which only tests import"},
		{pkgs: []string{"cmd/pds"}, direct: []string{"net/http"},
			why: "cmd wires packages together and never speaks HTTP itself: httpfront owns the server, its connections, timeouts and limits, and the http package the handler; since that package is also named http a mistake would hide behind an alias"},
		{pkgs: []string{"httpfront"}, transitive: append([]string{mod + "http", mod + "mcp", mod + "service", mod + "keys", mod + "quota", mod + "kv", mod + "index"}, engines...),
			why: "httpfront serves any http.Handler and answers nothing itself: every answer on both paths is the handler's, so its lane cannot grow a shortcut around authentication, limits, logs and metrics, and a request gets the same answer with or without the lane"},
	}
	for _, r := range rules {
		for _, pkg := range r.pkgs {
			for _, imp := range goList(t, pkg, false) {
				for _, f := range r.direct {
					if imp.path == f || strings.HasPrefix(imp.path, f+"/") {
						t.Errorf("%s imports %s, but %s", pkg, imp.path, r.why)
					}
				}
			}
			for _, dep := range goList(t, pkg, true) {
				if r.stdOnly && !dep.std && dep.path != mod+pkg {
					t.Errorf("%s depends on %s and must use only the standard library: %s", pkg, dep.path, r.why)
				}
				for _, f := range r.transitive {
					if dep.path == f || strings.HasPrefix(dep.path, f+"/") {
						t.Errorf("%s depends on %s, but %s", pkg, dep.path, r.why)
					}
				}
			}
		}
	}
}

// adapters are the packages that translate one outside thing into domain
// types (export the other way: domain types into a Parquet file). scratch is not one: it is the offline tools' external sort, which
// ingest and the Open Food Facts importer both use.
var adapters = []string{"kv", "index", "keys", "quota", "openfoodfacts", "metrics", "export"}

// modPaths returns the import paths of packages of this module.
func modPaths(pkgs ...string) []string {
	out := make([]string, len(pkgs))
	for i, p := range pkgs {
		out[i] = "github.com/productdata/pds/" + p
	}
	return out
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
