package pds_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The layering rules: transports never import a storage engine themselves
// (they reach storage only through service), nothing the server runs
// depends on ingest, and domain and gs1 use only the standard library.
func TestImports(t *testing.T) {
	const mod = "github.com/productdata/pds/"
	engines := []string{"github.com/cockroachdb/pebble", "github.com/blevesearch/bleve"}
	cases := []struct {
		pkg        string
		direct     []string // may not be imported by the package itself
		transitive []string // may not be anywhere in its dependencies
		stdOnly    bool
	}{
		{pkg: "http", direct: engines, transitive: []string{mod + "ingest"}},
		{pkg: "mcp", direct: engines, transitive: []string{mod + "ingest"}},
		{pkg: "service", transitive: []string{mod + "ingest", mod + "http", mod + "mcp"}},
		{pkg: "domain", stdOnly: true},
		{pkg: "gs1", stdOnly: true},
	}
	list := func(t *testing.T, format, pkg string) []string {
		out, err := exec.Command("go", "list", "-deps="+map[bool]string{true: "true", false: "false"}[format == "deps"],
			"-f", map[bool]string{true: "{{if not .Standard}}{{.ImportPath}}{{end}}", false: `{{join .Imports "\n"}}`}[format == "deps"],
			"./"+pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list: %v\n%s", err, out)
		}
		return strings.Fields(string(out))
	}
	for _, c := range cases {
		t.Run(c.pkg, func(t *testing.T) {
			for _, dep := range list(t, "imports", c.pkg) {
				for _, f := range c.direct {
					if strings.HasPrefix(dep, f) {
						t.Errorf("%s imports %s", c.pkg, dep)
					}
				}
			}
			for _, dep := range list(t, "deps", c.pkg) {
				if c.stdOnly && dep != mod+c.pkg {
					t.Errorf("%s depends on %s; it must use only the standard library", c.pkg, dep)
				}
				for _, f := range c.transitive {
					if strings.HasPrefix(dep, f) {
						t.Errorf("%s depends on %s", c.pkg, dep)
					}
				}
			}
		})
	}
}

// cmd/pds wires packages together and never speaks HTTP itself (the http
// package owns the server, its timeouts and limits): no non-test file of it
// imports net/http. The package is named http, so a mistake would otherwise
// go unseen behind an alias.
func TestCmdFreeOfNetHTTP(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, "./cmd/pds").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, imp := range strings.Fields(string(out)) {
		if imp == "net/http" || strings.HasPrefix(imp, "net/http/") {
			t.Errorf("cmd/pds imports %s", imp)
		}
	}
}
