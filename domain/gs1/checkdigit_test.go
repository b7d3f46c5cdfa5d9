package gs1

import "testing"

func TestCheckDigit(t *testing.T) {
	tests := []struct {
		rule, body string
		want       byte
		ok         bool
	}{
		{"mod-10: GTIN-13 body", "952012345678", '8', true},
		{"mod-10: GTIN-12 body", "03600029145", '2', true},
		{"mod-10: GTIN-8 body", "9638507", '4', true},
		{"mod-10: SSCC body", "09520123456789123", '5', true},
		{"mod-10: sum already a multiple of 10 gives 0", "402000000000", '4', true},
		{"mod-10: all zeros give 0", "0000000", '0', true},
		{"mod-10: left zero-padding never changes it", "0000952012345678", '8', true},
		{"mod-10: one digit", "5", '5', true},
		{"mod-10: empty body", "", 0, false},
		{"mod-10: letter", "95201234567A", 0, false},
		{"go trap: non-ASCII digit in the body", "95201234567٨", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.rule, func(t *testing.T) {
			got, ok := CheckDigit(tc.body)
			if got != tc.want || ok != tc.ok {
				t.Errorf("CheckDigit(%q) = %q, %v; want %q, %v", tc.body, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestValidCheckDigit(t *testing.T) {
	tests := []struct {
		rule, s string
		want    bool
	}{
		{"valid: GTIN-13", "9520123456788", true},
		{"valid: GTIN-14", "09520123456788", true},
		{"invalid: last digit off by one", "9520123456789", false},
		{"invalid: one character", "8", false},
		{"invalid: empty", "", false},
		{"invalid: letter as check digit", "952012345678X", false},
	}
	for _, tc := range tests {
		t.Run(tc.rule, func(t *testing.T) {
			if got := ValidCheckDigit(tc.s); got != tc.want {
				t.Errorf("ValidCheckDigit(%q) = %v", tc.s, got)
			}
		})
	}
}

func TestCheckPairAlpha(t *testing.T) {
	tests := []struct {
		rule, body, want string
	}{
		{"csumalpha: the GS1 example GMN", "1987654Ad4X4bL5ttr2310c", "2K"},
		{"csumalpha: single character (index 14 times 2 is 28)", "1", "2W"},
		{"csumalpha: empty body", "", ""},
		{"csumalpha: a character outside CSET 82", "12 3", ""},
	}
	for _, tc := range tests {
		t.Run(tc.rule, func(t *testing.T) {
			p, ok := CheckPairAlpha(tc.body)
			got := ""
			if ok {
				got = string(p[:])
			}
			if got != tc.want {
				t.Errorf("CheckPairAlpha(%q) = %q, want %q", tc.body, got, tc.want)
			}
		})
	}
}
