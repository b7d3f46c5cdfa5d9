package ingest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/productdata/pds/ingest"
	"github.com/productdata/pds/kv"
)

// TestPassportSelection runs the data-driven files under testdata/selection,
// one directive per rule of passport selection:
//
//	base                 the input files (case format: "-- name" lines, then
//	                     that file's lines) every later directive starts from
//	passport subject=S [as=(public, acme)]
//	                     builds a snapshot with the real ingest from the base
//	                     plus the directive's own lines (appended to the
//	                     base's file of the same name) and shows the passport
//	                     of S as each caller sees it (public = no tenant)
//
// Refresh the expected output with go test ./ingest -run TestPassportSelection -rewrite.
func TestPassportSelection(t *testing.T) {
	datadriven.Walk(t, "testdata/selection", func(t *testing.T, path string) {
		var base map[string]string
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			switch td.Cmd {
			case "base":
				base = caseFiles(td.Input)
				return ""
			case "passport":
				var subject string
				td.ScanArgs(t, "subject", &subject)
				callers := []string{"public"}
				if arg, ok := td.Arg("as"); ok {
					callers = arg.Vals
				}
				in := t.TempDir()
				files := caseFiles(td.Input)
				for name, lines := range base {
					files[name] = lines + files[name]
				}
				for name, lines := range files {
					if err := os.WriteFile(filepath.Join(in, name), []byte(lines), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				out := filepath.Join(t.TempDir(), "snap")
				var rejects bytes.Buffer
				if _, err := ingest.Run(context.Background(), ingest.Options{In: in, Out: out, Rejects: &rejects}); err != nil {
					t.Fatal(err)
				}
				var b strings.Builder
				if rejects.Len() > 0 {
					b.WriteString("rejected:\n" + indent(rejects.String()))
				}
				for _, caller := range callers {
					b.WriteString(showPassport(t, out, subject, caller))
				}
				return b.String()
			default:
				t.Fatalf("unknown directive %q", td.Cmd)
				return ""
			}
		})
	})
}

// caseFiles splits text in the case format into file name -> lines.
func caseFiles(text string) map[string]string {
	files := map[string]string{}
	cur := ""
	for _, line := range strings.Split(text, "\n") {
		if name, ok := strings.CutPrefix(line, "-- "); ok {
			cur = name
			files[cur] += ""
			continue
		}
		if cur != "" && strings.TrimSpace(line) != "" {
			files[cur] += line + "\n"
		}
	}
	return files
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n  ") + "\n"
}

// showPassport reads the passport of subject as a caller of tenant reads it
// (through the alias, as the service does) and writes what selection
// decided: status, each attribute with the claim it came from, validation,
// updated_at, sources, warnings and coverage.
func showPassport(t *testing.T, snap, subject, caller string) string {
	t.Helper()
	tenant := caller
	if caller == "public" {
		tenant = ""
	}
	st, err := kv.Open(filepath.Join(snap, "store"), 1<<20, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	alias, ok, err := st.Alias(subject)
	if err != nil {
		t.Fatal(err)
	}
	if !ok || !alias.VisibleTo(tenant) {
		return caller + ": no such product\n"
	}
	raw, ok, err := st.View(kv.TagPassport, alias.Subject, alias.ViewTenant(tenant), nil)
	if err != nil || !ok {
		t.Fatalf("no passport view of %s for %q: %v", alias.Subject, tenant, err)
	}
	view, err := kv.DecodeView(raw)
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Status string
		Reason string
		Data   *struct {
			Attributes map[string]json.RawMessage
			UpdatedAt  string `json:"updated_at"`
		}
		Claims []struct {
			ID        string
			Predicate string
		}
		Sources    []struct{ ID string }
		Validation map[string]string
		Warnings   []struct{ Code, Detail string }
	}
	if err := json.Unmarshal([]byte("{"+string(view.Body)+"}"), &body); err != nil {
		t.Fatalf("passport body %s: %v", view.Body, err)
	}
	var cov struct {
		Consulted []string                      `json:"sources_consulted"`
		Skipped   []struct{ ID, Reason string } `json:"sources_skipped"`
	}
	if err := json.Unmarshal(view.Coverage, &cov); err != nil {
		t.Fatalf("coverage %s: %v", view.Coverage, err)
	}

	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", caller, body.Status)
	if body.Reason != "" {
		fmt.Fprintf(&b, " (%s)", body.Reason)
	}
	b.WriteString("\n")
	if body.Data != nil {
		from := map[string]string{}
		for _, c := range body.Claims {
			from[c.Predicate] = c.ID
		}
		predicates := make([]string, 0, len(body.Data.Attributes))
		for p := range body.Data.Attributes {
			predicates = append(predicates, p)
		}
		sort.Strings(predicates)
		for _, p := range predicates {
			fmt.Fprintf(&b, "  %s = %s (claim %s)\n", p, body.Data.Attributes[p], from[p])
		}
		classes := make([]string, 0, len(body.Validation))
		for c, v := range body.Validation {
			classes = append(classes, c+"="+v)
		}
		sort.Strings(classes)
		if len(classes) > 0 {
			fmt.Fprintf(&b, "  validation: %s\n", strings.Join(classes, " "))
		}
		fmt.Fprintf(&b, "  updated_at: %s\n", body.Data.UpdatedAt)
	}
	for _, s := range body.Sources {
		fmt.Fprintf(&b, "  source: %s\n", s.ID)
	}
	for _, w := range body.Warnings {
		fmt.Fprintf(&b, "  warning %s: %s\n", w.Code, w.Detail)
	}
	consulted := strings.Join(cov.Consulted, " ")
	if consulted == "" {
		consulted = "(none)"
	}
	fmt.Fprintf(&b, "  consulted: %s\n", consulted)
	for _, s := range cov.Skipped {
		fmt.Fprintf(&b, "  skipped: %s %s\n", s.ID, s.Reason)
	}
	return b.String()
}
