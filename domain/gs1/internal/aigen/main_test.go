package main

import (
	"bytes"
	"os"
	"testing"
)

// dictPath is the dictionary as the repository layout places it: the
// shared folder beside the checkout.
const dictPath = "../../../../../shared/gs1/gs1-syntax-dictionary-2026-01-27.txt"

// TestTableIsCurrent regenerates the AI table and compares it with the
// committed gs1/aitable.go. It is skipped where the dictionary is absent.
func TestTableIsCurrent(t *testing.T) {
	if _, err := os.Stat(dictPath); err != nil {
		t.Skipf("dictionary not present (%v); skipping", err)
	}
	got, err := generateFile(dictPath)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../../aitable.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("gs1/aitable.go is stale: run go generate in gs1/")
	}
}

func TestParseLine(t *testing.T) {
	tests := []struct {
		name, line string
		wantAIs    int
		check      func(t *testing.T, e entry)
	}{
		{"range with flags", "3100-3105  *?  N6  req=01,02 ex=310n # NET WEIGHT (kg)", 6, func(t *testing.T, e entry) {
			if !e.fixedLen || !e.dlAttr || e.title != "NET WEIGHT (kg)" || len(e.ex) != 1 || e.ex[0] != "310n" {
				t.Errorf("got %+v", e)
			}
		}},
		{"qualifier alternatives", "01 *? N14,csum,gcppos2 ex=255,37 dlpkey=22,10,21|235 # GTIN", 1, func(t *testing.T, e entry) {
			if !e.dlpkey || len(e.qualifiers) != 2 || len(e.qualifiers[0]) != 3 || e.qualifiers[1][0] != "235" {
				t.Errorf("got %+v", e)
			}
			if len(e.comps) != 1 || e.comps[0].min != 14 || e.comps[0].linters[0] != "csum" {
				t.Errorf("got %+v", e.comps)
			}
		}},
		{"optional components and repeated req", "250 ? X..30 req=01,8006 req=21 # SECONDARY SERIAL", 1, func(t *testing.T, e entry) {
			if len(e.req) != 2 || e.req[1][0][0] != "21" || e.comps[0].min != 1 || e.comps[0].max != 30 {
				t.Errorf("got %+v", e)
			}
		}},
		{"optional component with linter", "423 ? N3,iso3166 [N3],iso3166 req=01,02 # X", 1, func(t *testing.T, e entry) {
			if len(e.comps) != 2 || !e.comps[1].optional || e.comps[1].linters[0] != "iso3166" {
				t.Errorf("got %+v", e.comps)
			}
		}},
		{"no flags", "7040 N1 X1 X1 X1,importeridx # UIC+EXT", 1, func(t *testing.T, e entry) {
			if e.dlAttr || len(e.comps) != 4 {
				t.Errorf("got %+v", e)
			}
		}},
		{"group requirement", "7004 ? N..4 req=01+10 # ACTIVE POTENCY", 1, func(t *testing.T, e entry) {
			if len(e.req[0][0]) != 2 {
				t.Errorf("got %+v", e.req)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			es, err := parseLine(tt.line)
			if err != nil {
				t.Fatal(err)
			}
			if len(es) != tt.wantAIs {
				t.Fatalf("got %d entries", len(es))
			}
			tt.check(t, es[0])
		})
	}
	for _, bad := range []string{"01", "01 *? Q14", "1 N2", "3105-3100 N6", "01 N14 foo"} {
		if _, err := parseLine(bad); err == nil {
			t.Errorf("parseLine(%q) accepted a bad line", bad)
		}
	}
}
