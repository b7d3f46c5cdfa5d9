package pds_test

import (
	"os/exec"
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
		{pkgs: []string{"http", "mcp", "httpwire", "service", "resolver"}, transitive: []string{mod + "ingest", mod + "openfoodfacts", mod + "fleet"},
			why: "the server only reads snapshots; building, importing and shipping them is the offline tools' job (ingest, import off, the snapshot commands), and none of their code belongs in what serves"},
		{pkgs: []string{"service"}, transitive: []string{mod + "http", mod + "mcp", mod + "resolver"},
			why: "every operation is implemented once, below both transports; an operation that knew a transport would let that transport's wire form leak into the other"},
		{pkgs: []string{"domain"}, stdOnly: true,
			why: "domain is the vocabulary every package shares, so it must not bring a storage engine or a transport into any of them"},
		{pkgs: []string{"gs1"}, stdOnly: true,
			why: "ingest and serving judge identifiers with this same code, which is pure syntax with nothing to open or configure"},
		{pkgs: []string{"cmd/pds"}, transitive: []string{"testing", mod + "internal/fixture"},
			why: "test code stays out of the binary that ships: test helpers belong in _test.go files and internal/fixture, which only tests import"},
		{pkgs: []string{"cmd/pds"}, direct: []string{"net/http"},
			why: "cmd wires packages together and never speaks HTTP itself: the http package owns the server, its timeouts and limits, and since that package is also named http a mistake would hide behind an alias"},
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
