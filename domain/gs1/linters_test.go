package gs1

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLinters(t *testing.T) {
	tests := []struct {
		linter, value string
		ok            bool
	}{
		{"csum", "9520123456788", true},
		{"csum", "9520123456780", false},
		{"csumalpha", "1987654Ad4X4bL5ttr2310c2K", true},
		{"csumalpha", "1987654Ad4X4bL5ttr2310c2k", false},
		{"csumalpha", "1987654Ad4X4bL5ttr2310cK2", false},
		{"yymmdd", "260131", true},
		{"yymmdd", "260132", false},
		{"yymmdd", "260431", false},
		{"yymmdd", "260100", false},
		{"yymmdd", "000229", true},
		{"yymmd0", "260100", true},
		{"yymmd0", "261300", false},
		{"yymmd0", "260001", false},
		{"yyyymmdd", "20000229", true},
		{"yyyymmdd", "19000229", false},
		{"yyyymmdd", "20240229", true},
		{"hhmi", "2359", true},
		{"hhmi", "2360", false},
		{"hh", "23", true},
		{"hh", "24", false},
		{"mi", "59", true},
		{"ss", "60", false},
		{"iso3166", "276", true},
		{"iso3166", "826", true},
		{"iso3166", "000", false},
		{"iso3166", "999", false},
		{"iso3166999", "999", true},
		{"iso3166alpha2", "GB", true},
		{"iso3166alpha2", "UK", false},
		{"iso3166alpha2", "gb", false},
		{"iso4217", "978", true},
		{"iso4217", "840", true},
		{"iso4217", "001", false},
		{"pieceoftotal", "0102", true},
		{"pieceoftotal", "0202", true},
		{"pieceoftotal", "0302", false},
		{"pieceoftotal", "0100", false},
		{"nozeroprefix", "0", false},
		{"nozeroprefix", "1", true},
		{"gcppos1", "9520", true},
		{"gcppos1", "9520ABC", true},
		{"gcppos1", "952", false},
		{"gcppos1", "952A123", false},
		{"gcppos1", "A9520123", false},
		{"gcppos2", "09520", true},
		{"gcppos2", "X9520", true},
		{"gcppos2", "0952", false},
		{"gcppos2", "0952X", false},
		{"mediatype", "01", true},
		{"mediatype", "10", true},
		{"mediatype", "80", true},
		{"mediatype", "99", true},
		{"mediatype", "00", false},
		{"mediatype", "11", false},
		{"mediatype", "79", false},
		{"packagetype", "BX", true},
		{"packagetype", "8", true},
		{"packagetype", "RB1", true},
		{"packagetype", "X20", true},
		{"packagetype", "bx", false},
		{"packagetype", "QE", false},
		{"packagetype", "", false},
		// couponcode: company prefix VLI 0 (6 digits), offer code, save value, first purchase.
		{"couponcode", "0952012" + "123456" + "15" + "11" + "0" + "123", true},
		{"couponcode", "6952012345678" + "123456" + "3123" + "1" + "1" + "9" + "999", true},
		{"couponcode", "7952012123456" + "123456" + "15" + "11" + "0" + "123", false},      // company prefix VLI 7
		{"couponcode", "0952012" + "123456" + "05" + "11" + "0" + "123", false},            // save value VLI 0
		{"couponcode", "0952012" + "123456" + "15" + "11" + "5" + "123", false},            // requirement code 5
		{"couponcode", "0952012" + "123456" + "15" + "11" + "0" + "12", false},             // family code short
		{"couponcode", "0952A12" + "123456" + "15" + "11" + "0" + "123", false},            // not digits
		{"couponcode", "0" + "95A012", false},                                              // not digits
		{"couponcode", "0952012" + "123456" + "15" + "11" + "0" + "123" + "3261231", true}, // expiry
		{"couponcode", "0952012" + "123456" + "15" + "11" + "0" + "123" + "3261331", false},
		{"couponcode", "0952012" + "123456" + "15" + "11" + "0" + "123" + "3261231" + "4260101", true},
		{"couponcode", "0952012" + "123456" + "15" + "11" + "0" + "123" + "3260101" + "4261231", false}, // start after expiry
		{"couponcode", "0952012" + "123456" + "15" + "11" + "0" + "123" + "1" + "2" + "15" + "0" + "123" + "9", true},
		{"couponcode", "0952012" + "123456" + "15" + "11" + "0" + "123" + "1" + "4" + "15" + "0" + "123" + "9", false}, // rules code 4
		{"couponcode", "0952012" + "123456" + "15" + "11" + "0" + "123" + "2" + "15" + "0" + "123" + "0952012", true},
		{"couponcode", "0952012" + "123456" + "15" + "11" + "0" + "123" + "5" + "0" + "123456", true},
		{"couponcode", "0952012" + "123456" + "15" + "11" + "0" + "123" + "6" + "1" + "9520123", true},
		{"couponcode", "0952012" + "123456" + "15" + "11" + "0" + "123" + "6" + "8" + "9520123", false},
		{"couponcode", "0952012" + "123456" + "15" + "11" + "0" + "123" + "9" + "1" + "2" + "7" + "1", true},
		{"couponcode", "0952012" + "123456" + "15" + "11" + "0" + "123" + "9" + "3" + "2" + "7" + "1", false},
		{"couponcode", "0952012" + "123456" + "15" + "11" + "0" + "123" + "7", false},                              // no optional field 7
		{"couponcode", "0952012" + "123456" + "15" + "11" + "0" + "123" + "5" + "0" + "123456" + "3261231", false}, // out of order
		{"couponposoffer", "0" + "0" + "952012" + "123456" + "0" + "123456", true},
		{"couponposoffer", "1" + "6" + "952012345678" + "123456" + "9" + "123456789012345", true},
		{"couponposoffer", "2" + "0" + "952012" + "123456" + "0" + "123456", false},  // format code 2
		{"couponposoffer", "0" + "7" + "952012" + "123456" + "0" + "123456", false},  // funder VLI 7
		{"couponposoffer", "0" + "0" + "952012" + "123456" + "1" + "123456", false},  // serial short
		{"couponposoffer", "0" + "0" + "952012" + "123456" + "0" + "1234567", false}, // left over
		{"nozeroprefix", "10", true},
		{"nozeroprefix", "01", false},
		{"importeridx", "_", true},
		{"importeridx", "z", true},
		{"importeridx", "!", false},
		{"zero", "0", true},
		{"zero", "1", false},
		{"nonzero", "0001", true},
		{"nonzero", "0000", false},
		{"yesno", "1", true},
		{"yesno", "2", false},
		{"hyphen", "-", true},
		{"hyphen", "+", false},
		{"winding", "9", true},
		{"winding", "2", false},
		{"iso5218", "2", true},
		{"iso5218", "3", false},
		{"latitude", "1800000000", true},
		{"latitude", "1800000001", false},
		{"longitude", "3600000000", true},
		{"longitude", "3600000001", false},
		{"hasnondigit", "12A", true},
		{"hasnondigit", "123", false},
		{"pcenc", "A%20B", true},
		{"pcenc", "A%2", false},
		{"pcenc", "100%", false},
		{"posinseqslash", "1/2", true},
		{"posinseqslash", "3/2", false},
		{"posinseqslash", "0/2", false},
		{"posinseqslash", "12/", false},
		{"iban", "GB82WEST12345698765432", true},
		{"iban", "GB82WEST12345698765433", false},
		{"iban", "gb82WEST12345698765432", false},
		{"iban", "XX82WEST12345698765432", false}, // not an ISO 3166 country
		{"iban", "GB82WEST12", false},             // 10 characters
	}
	for _, tc := range tests {
		t.Run("linter "+tc.linter+" "+tc.value, func(t *testing.T) {
			msg, known := lintKnown(tc.linter, tc.value)
			if !known {
				t.Fatalf("linter %s unknown", tc.linter)
			}
			if (msg == "") != tc.ok {
				t.Errorf("%s(%q) = %q, want ok=%v", tc.linter, tc.value, msg, tc.ok)
			}
		})
	}
}

// TestEveryLinterAccountedFor fails when the dictionary names a linter pds
// neither applies nor lists in unappliedLinters (a new dictionary release).
func TestEveryLinterAccountedFor(t *testing.T) {
	for _, d := range aiTable {
		for _, c := range d.comps {
			for _, name := range c.linters {
				_, known := lintKnown(name, "")
				_, skipped := unappliedLinters[name]
				if known == skipped {
					t.Errorf("AI %s: linter %s known=%v, listed as unapplied=%v", d.ai, name, known, skipped)
				}
			}
		}
	}
}

func TestAITable(t *testing.T) {
	if dictionaryRelease != "2026-01-27" {
		t.Errorf("release %s", dictionaryRelease)
	}
	tests := []struct {
		rule string
		ai   string
		want func(d *aiDef) bool
	}{
		{"table: 01 is a fixed-length primary key with two qualifier sequences", "01", func(d *aiDef) bool {
			return d.fixedLen && d.dlpkey && len(d.qualifiers) == 2 && strings.Join(d.qualifiers[0], ",") == "22,10,21" && d.qualifiers[1][0] == "235"
		}},
		{"table: 10 is a data attribute of up to 20 characters", "10", func(d *aiDef) bool {
			return d.dlAttr && !d.fixedLen && d.comps[0].cset == 'X' && d.comps[0].max == 20
		}},
		{"table: 21 is not a data attribute", "21", func(d *aiDef) bool { return !d.dlAttr }},
		{"table: ranges are expanded (3105)", "3105", func(d *aiDef) bool { return d.title == "NET WEIGHT (kg)" && d.ex[0] == "310n" }},
		{"table: ranges are expanded (99)", "99", func(d *aiDef) bool { return d.comps[0].max == 90 }},
		{"table: 250 has two req groups", "250", func(d *aiDef) bool { return len(d.req) == 2 }},
		{"table: 8003 has three components", "8003", func(d *aiDef) bool { return len(d.comps) == 3 && d.comps[2].optional }},
	}
	for _, tc := range tests {
		t.Run(tc.rule, func(t *testing.T) {
			d := lookupAI(tc.ai)
			if d == nil || !tc.want(d) {
				t.Errorf("AI %s: %+v", tc.ai, d)
			}
		})
	}
	for _, missing := range []string{"", "0", "04", "99999", "3106"} {
		if lookupAI(missing) != nil {
			t.Errorf("lookupAI(%q) found an AI", missing)
		}
	}
}

func TestCheckAIValue(t *testing.T) {
	tests := []struct {
		rule, ai, value string
		ok              bool
	}{
		{"format: optional components may be left out", "8003", "09520123456788", true},
		{"format: a fixed component cut short", "8006", "09520123456788010", false},
		{"format: CSET 39 allows # - /", "8010", "9520123#-/", true},
		{"format: base64url signature", "8030", "abc-_XYZ09==", true},
		{"format: base64url padding only at the end", "8030", "ab=c", false},
		{"format: base64url unpadded of any length", "8030", "abcd", true},
		{"format: base64url one = on 3 characters", "8030", "ab=", true},
		{"format: base64url two = on 6 characters", "8030", "abcd==", true},
		{"format: base64url padded length not a multiple of 3", "8030", "abc=", false},
		{"format: base64url three =", "8030", "abc===", false},
		{"gcppos1: GINC starts with a company prefix", "401", "ABC123", false},
		{"gcppos1: GINC with 4 leading digits", "401", "9520X", true},
		{"mediatype: AI 7241", "7241", "11", false},
		{"packagetype: AI 7041", "7041", "BX", true},
		{"packagetype: AI 7041 unknown", "7041", "ZZZZ", false},
		{"format: N..8 count", "30", "12345678", true},
		{"format: N..8 count too long", "30", "123456789", false},
		{"format: variable-length second component", "421", "276ABC123", true},
		{"format: X1 hyphen component", "4330", "001234-", true},
		{"format: X1 hyphen component wrong", "4330", "001234+", false},
	}
	for _, tc := range tests {
		t.Run(tc.rule, func(t *testing.T) {
			msg := checkAIValue(lookupAI(tc.ai), tc.value)
			if (msg == "") != tc.ok {
				t.Errorf("AI %s %q: %q", tc.ai, tc.value, msg)
			}
		})
	}
}

func TestEveryAINamed(t *testing.T) {
	for _, d := range aiTable {
		if d.title == "" {
			t.Errorf("AI %s has no name", d.ai)
		}
	}
}

// TestLintersDocumented checks that docs/gs1.md's table of linters names
// every linter of the dictionary.
func TestLintersDocumented(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "gs1.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "### Every linter of the dictionary")
	end := strings.Index(doc, "### Syntax rules")
	if start < 0 || end < start {
		t.Fatal("docs/gs1.md has no linter table")
	}
	table := doc[start:end]
	for _, d := range aiTable {
		for _, c := range d.comps {
			for _, name := range c.linters {
				if !strings.Contains(table, "`"+name+"`") {
					t.Errorf("linter %s (AI %s) is not in the table of docs/gs1.md", name, d.ai)
				}
			}
		}
	}
}
