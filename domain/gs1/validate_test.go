package gs1

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// validateCase is one Validate call and what it must give. warns lists the
// warning codes in order, space-separated.
type validateCase struct {
	rule      string
	ns, value string
	err       string // error code, or "" for a verdict
	valid     bool
	ambiguous bool
	judgedNS  string // "" with ambiguous
	norm      string
	format    string
	expected  string
	warns     string
	technical string
}

var validateCases = []validateCase{
	// Namespaces.
	{rule: "namespace: unknown namespace is UNSUPPORTED_NAMESPACE", ns: "isbn", value: "9781234567897", err: CodeUnsupportedNamespace},
	{rule: "namespace: namespaces are lower case", ns: "GTIN", value: "09520123456788", err: CodeUnsupportedNamespace},
	{rule: "namespace: empty namespace means auto", ns: "", value: "012345678905", valid: true, judgedNS: NSGTIN, norm: "00012345678905", format: FormatGTIN12, technical: TechnicalPass},
	// Element strings under auto: the primary key is the identifier.
	{rule: "element string: bracketed GTIN with expiry and lot", ns: NSAuto, value: "(01)09520123456788(17)261231(10)AB12", valid: true, judgedNS: NSGTIN, norm: "09520123456788", format: FormatGTIN14, warns: WarnDemoPrefix, technical: TechnicalWarn},
	{rule: "element string: scanner data with ]d2 and GS", ns: "", value: "]d2010400638133393110AB\x1d17261231", valid: true, judgedNS: NSGTIN, norm: "04006381333931", format: FormatGTIN14, technical: TechnicalPass},
	{rule: "element string: GLN key", ns: NSAuto, value: "(414)4006381333931(254)1", valid: true, judgedNS: NSGLN, norm: "4006381333931", format: FormatGLN, technical: TechnicalPass},
	{rule: "element string: SSCC key with content", ns: NSAuto, value: "(00)140063810000000007(02)04006381333931(37)10", valid: true, judgedNS: NSSSCC, norm: "140063810000000007", format: FormatSSCC, technical: TechnicalPass},
	{rule: "element string: a key pds has no namespace for", ns: NSAuto, value: "(8004)4006ABC", valid: true, judgedNS: NSElementString, norm: "4006ABC", technical: TechnicalPass},
	{rule: "element string: wrong check digit", ns: NSAuto, value: "(01)04006381333938", judgedNS: NSElementString, norm: "(01)04006381333938", warns: WarnInvalidFormat, technical: TechnicalFail},
	{rule: "element string: no primary key", ns: NSAuto, value: "(02)04006381333931(37)10", judgedNS: NSElementString, norm: "(02)04006381333931(37)10", warns: WarnInvalidFormat, technical: TechnicalFail},
	{rule: "element string: a missing requisite is a warning", ns: NSAuto, value: "(414)4006381333931(10)L", valid: true, judgedNS: NSGLN, norm: "4006381333931", format: FormatGLN, warns: WarnRequisiteAIMissing, technical: TechnicalWarn},
	{rule: "element string: only under auto; gtin judges the text as a GTIN", ns: NSGTIN, value: "(01)04006381333931", judgedNS: NSGTIN, norm: "(01)04006381333931", warns: WarnInvalidCharacters, technical: TechnicalFail},
	{rule: "namespace: auto spelled out", ns: NSAuto, value: "012345678905", valid: true, judgedNS: NSGTIN, norm: "00012345678905", format: FormatGTIN12, technical: TechnicalPass},

	// GTIN lengths and normalisation.
	{rule: "gtin: GTIN-8 pads to 14", ns: NSGTIN, value: "96385074", valid: true, judgedNS: NSGTIN, norm: "00000096385074", format: FormatGTIN8, technical: TechnicalPass},
	{rule: "gtin: GTIN-12 pads to 14", ns: NSGTIN, value: "036000291452", valid: true, judgedNS: NSGTIN, norm: "00036000291452", format: FormatGTIN12, technical: TechnicalPass},
	{rule: "gtin: GTIN-13 pads to 14", ns: NSGTIN, value: "4006381333931", valid: true, judgedNS: NSGTIN, norm: "04006381333931", format: FormatGTIN13, technical: TechnicalPass},
	{rule: "gtin: GTIN-14 kept", ns: NSGTIN, value: "14006381333938", valid: true, judgedNS: NSGTIN, norm: "14006381333938", format: FormatGTIN14, technical: TechnicalPass},
	{rule: "gtin: wrong check digit gives expected_check_digit", ns: NSGTIN, value: "4006381333932", judgedNS: NSGTIN, norm: "04006381333932", format: FormatGTIN13, expected: "1", warns: WarnInvalidCheckDigit, technical: TechnicalFail},
	{rule: "gtin: 11 digits is INVALID_LENGTH", ns: NSGTIN, value: "03600029145", judgedNS: NSGTIN, norm: "03600029145", warns: WarnInvalidLength, technical: TechnicalFail},
	{rule: "gtin: 15 digits is INVALID_LENGTH", ns: NSGTIN, value: "140063813339380", judgedNS: NSGTIN, norm: "140063813339380", warns: WarnInvalidLength, technical: TechnicalFail},
	{rule: "gtin: empty is INVALID_LENGTH", ns: NSGTIN, value: "", judgedNS: NSGTIN, warns: WarnInvalidLength, technical: TechnicalFail},
	{rule: "gtin: letters are INVALID_CHARACTERS", ns: NSGTIN, value: "40063813339A1", judgedNS: NSGTIN, norm: "40063813339A1", warns: WarnInvalidCharacters, technical: TechnicalFail},
	{rule: "gtin: no trimming of spaces", ns: NSGTIN, value: " 4006381333931", judgedNS: NSGTIN, norm: " 4006381333931", warns: WarnInvalidCharacters, technical: TechnicalFail},
	{rule: "go trap: Arabic-Indic digits are not digits", ns: NSGTIN, value: "٤٠٠٦٣٨١٣٣٣٩٣١", judgedNS: NSGTIN, norm: "٤٠٠٦٣٨١٣٣٣٩٣١", warns: WarnInvalidCharacters, technical: TechnicalFail},
	{rule: "go trap: fullwidth digits are not digits", ns: NSGTIN, value: "４００６３８１３３３９３１", judgedNS: NSGTIN, norm: "４００６３８１３３３９３１", warns: WarnInvalidCharacters, technical: TechnicalFail},
	{rule: "go trap: one non-ASCII digit among ASCII ones", ns: NSAuto, value: "400638133393١", judgedNS: NSInternalSKU, norm: "400638133393١", warns: WarnInvalidCharacters, technical: TechnicalFail},
	{rule: "gtin: hyphenated GTIN is not a GTIN", ns: NSGTIN, value: "400-6381333931", judgedNS: NSGTIN, norm: "400-6381333931", warns: WarnInvalidCharacters, technical: TechnicalFail},

	// GLN and SSCC.
	{rule: "gln: 13 digits with check digit", ns: NSGLN, value: "4006381333931", valid: true, judgedNS: NSGLN, norm: "4006381333931", format: FormatGLN, technical: TechnicalPass},
	{rule: "gln: wrong check digit", ns: NSGLN, value: "4006381333930", judgedNS: NSGLN, norm: "4006381333930", format: FormatGLN, expected: "1", warns: WarnInvalidCheckDigit, technical: TechnicalFail},
	{rule: "gln: a GLN is never padded (12 digits)", ns: NSGLN, value: "036000291452", judgedNS: NSGLN, norm: "036000291452", warns: WarnInvalidLength, technical: TechnicalFail},
	{rule: "gln: characters", ns: NSGLN, value: "400638133393X", judgedNS: NSGLN, norm: "400638133393X", warns: WarnInvalidCharacters, technical: TechnicalFail},
	{rule: "sscc: 18 digits with check digit", ns: NSSSCC, value: "195201234567890129", valid: true, judgedNS: NSSSCC, norm: "195201234567890129", format: FormatSSCC, warns: WarnDemoPrefix, technical: TechnicalWarn},
	{rule: "sscc: wrong check digit", ns: NSSSCC, value: "195201234567890120", judgedNS: NSSSCC, norm: "195201234567890120", format: FormatSSCC, expected: "9", warns: WarnInvalidCheckDigit, technical: TechnicalFail},
	{rule: "sscc: 17 digits", ns: NSSSCC, value: "19520123456789012", judgedNS: NSSSCC, norm: "19520123456789012", warns: WarnInvalidLength, technical: TechnicalFail},
	{rule: "sscc: all zeros", ns: NSSSCC, value: "000000000000000000", valid: true, judgedNS: NSSSCC, norm: "000000000000000000", format: FormatSSCC, warns: WarnAllZeros, technical: TechnicalWarn},

	// Auto inference.
	{rule: "auto: 8 digits is a GTIN", value: "96385074", valid: true, judgedNS: NSGTIN, norm: "00000096385074", format: FormatGTIN8, technical: TechnicalPass},
	{rule: "auto: 12 digits is a GTIN", value: "036000291452", valid: true, judgedNS: NSGTIN, norm: "00036000291452", format: FormatGTIN12, technical: TechnicalPass},
	{rule: "auto: 14 digits is a GTIN", value: "09520123456788", valid: true, judgedNS: NSGTIN, norm: "09520123456788", format: FormatGTIN14, warns: WarnDemoPrefix, technical: TechnicalWarn},
	{rule: "auto: 18 digits is an SSCC", value: "195201234567890129", valid: true, judgedNS: NSSSCC, norm: "195201234567890129", format: FormatSSCC, warns: WarnDemoPrefix, technical: TechnicalWarn},
	{rule: "auto ambiguity: valid 13 digits fit gtin and gln", value: "4006381333931", valid: true, ambiguous: true, norm: "4006381333931"},
	{rule: "auto ambiguity: warnings of both readings, once each", value: "9520123456788", valid: true, ambiguous: true, norm: "9520123456788", warns: WarnDemoPrefix},
	{rule: "auto: 13 digits with wrong check digit is one gtin verdict", value: "4006381333932", judgedNS: NSGTIN, norm: "04006381333932", format: FormatGTIN13, expected: "1", warns: WarnInvalidCheckDigit, technical: TechnicalFail},
	{rule: "auto: 8 digits with wrong check digit stays a GTIN, never a SKU", value: "96385075", judgedNS: NSGTIN, norm: "00000096385075", format: FormatGTIN8, expected: "4", warns: WarnInvalidCheckDigit, technical: TechnicalFail},
	{rule: "auto: 12 digits with wrong check digit stays a GTIN", value: "036000291453", judgedNS: NSGTIN, norm: "00036000291453", format: FormatGTIN12, expected: "2", warns: WarnInvalidCheckDigit, technical: TechnicalFail},
	{rule: "auto: 14 digits with wrong check digit stays a GTIN", value: "09520123456789", judgedNS: NSGTIN, norm: "09520123456789", format: FormatGTIN14, expected: "8", warns: WarnInvalidCheckDigit, technical: TechnicalFail},
	{rule: "auto: 18 digits with wrong check digit stays an SSCC", value: "195201234567890120", judgedNS: NSSSCC, norm: "195201234567890120", format: FormatSSCC, expected: "9", warns: WarnInvalidCheckDigit, technical: TechnicalFail},
	{rule: "auto: digits of no GS1 length are an internal SKU", value: "12345", valid: true, judgedNS: NSInternalSKU, norm: "12345", format: FormatInternalSKU, technical: TechnicalPass},
	{rule: "auto: letters make an internal SKU", value: "ABC-123.x_9", valid: true, judgedNS: NSInternalSKU, norm: "ABC-123.x_9", format: FormatInternalSKU, technical: TechnicalPass},
	{rule: "auto: an invalid SKU shape", value: "ABC 123", judgedNS: NSInternalSKU, norm: "ABC 123", warns: WarnInvalidCharacters, technical: TechnicalFail},
	{rule: "auto: empty value", value: "", judgedNS: NSInternalSKU, warns: WarnInvalidLength, technical: TechnicalFail},

	// Internal SKU rules.
	{rule: "sku: case is preserved", ns: NSInternalSKU, value: "AbC", valid: true, judgedNS: NSInternalSKU, norm: "AbC", format: FormatInternalSKU, technical: TechnicalPass},
	{rule: "sku: 64 characters is the maximum", ns: NSInternalSKU, value: strings.Repeat("a", 64), valid: true, judgedNS: NSInternalSKU, norm: strings.Repeat("a", 64), format: FormatInternalSKU, technical: TechnicalPass},
	{rule: "sku: 65 characters is too long", ns: NSInternalSKU, value: strings.Repeat("a", 65), judgedNS: NSInternalSKU, norm: strings.Repeat("a", 65), warns: WarnInvalidLength, technical: TechnicalFail},
	{rule: "sku: empty is too short", ns: NSInternalSKU, value: "", judgedNS: NSInternalSKU, warns: WarnInvalidLength, technical: TechnicalFail},
	{rule: "sku: slash is not allowed", ns: NSInternalSKU, value: "A/B", judgedNS: NSInternalSKU, norm: "A/B", warns: WarnInvalidCharacters, technical: TechnicalFail},
	{rule: "sku: colon is not allowed", ns: NSInternalSKU, value: "A:B", judgedNS: NSInternalSKU, norm: "A:B", warns: WarnInvalidCharacters, technical: TechnicalFail},
	{rule: "sku: non-ASCII letter is not allowed", ns: NSInternalSKU, value: "café", judgedNS: NSInternalSKU, norm: "café", warns: WarnInvalidCharacters, technical: TechnicalFail},
	{rule: "sku: leading separator", ns: NSInternalSKU, value: "-AB", judgedNS: NSInternalSKU, norm: "-AB", warns: WarnInvalidFormat, technical: TechnicalFail},
	{rule: "sku: trailing separator", ns: NSInternalSKU, value: "AB.", judgedNS: NSInternalSKU, norm: "AB.", warns: WarnInvalidFormat, technical: TechnicalFail},
	{rule: "sku: doubled separators", ns: NSInternalSKU, value: "A-_B", judgedNS: NSInternalSKU, norm: "A-_B", warns: WarnInvalidFormat, technical: TechnicalFail},
	{rule: "sku: single separators of each kind", ns: NSInternalSKU, value: "a-b_c.d", valid: true, judgedNS: NSInternalSKU, norm: "a-b_c.d", format: FormatInternalSKU, technical: TechnicalPass},
	{rule: "warning LOOKS_LIKE_GS1_KEY: a SKU that is a valid GTIN-13", ns: NSInternalSKU, value: "4006381333931", valid: true, judgedNS: NSInternalSKU, norm: "4006381333931", format: FormatInternalSKU, warns: WarnLooksLikeGS1Key, technical: TechnicalWarn},
	{rule: "warning LOOKS_LIKE_GS1_KEY: a SKU that is a valid SSCC", ns: NSInternalSKU, value: "195201234567890129", valid: true, judgedNS: NSInternalSKU, norm: "195201234567890129", format: FormatInternalSKU, warns: WarnLooksLikeGS1Key, technical: TechnicalWarn},
	{rule: "warning LOOKS_LIKE_GS1_KEY: not for a wrong check digit", ns: NSInternalSKU, value: "4006381333932", valid: true, judgedNS: NSInternalSKU, norm: "4006381333932", format: FormatInternalSKU, technical: TechnicalPass},

	// Advisory warnings on GTINs.
	{rule: "warning RESTRICTED_CIRCULATION_NUMBER: prefix 20-29", ns: NSGTIN, value: "2012345678903", valid: true, judgedNS: NSGTIN, norm: "02012345678903", format: FormatGTIN13, warns: WarnRestrictedCirculation, technical: TechnicalWarn},
	{rule: "warning RESTRICTED_CIRCULATION_NUMBER: not for prefix 400-440 (GS1 Germany)", ns: NSGTIN, value: "4012345678901", valid: true, judgedNS: NSGTIN, norm: "04012345678901", format: FormatGTIN13, technical: TechnicalPass},
	{rule: "warning RESTRICTED_CIRCULATION_NUMBER: prefix 02", ns: NSGTIN, value: "0212345678909", valid: true, judgedNS: NSGTIN, norm: "00212345678909", format: FormatGTIN13, warns: WarnRestrictedCirculation + " " + WarnGTIN12WrittenAs13Digits, technical: TechnicalWarn},
	{rule: "warning RESTRICTED_CIRCULATION_NUMBER: prefix 04 (a GTIN-12 starting 4)", ns: NSGTIN, value: "412345678903", valid: true, judgedNS: NSGTIN, norm: "00412345678903", format: FormatGTIN12, warns: WarnRestrictedCirculation, technical: TechnicalWarn},
	{rule: "warning RESTRICTED_CIRCULATION_NUMBER: GTIN-8 starting 0", ns: NSGTIN, value: "01234565", valid: true, judgedNS: NSGTIN, norm: "00000001234565", format: FormatGTIN8, warns: WarnRestrictedCirculation, technical: TechnicalWarn},
	{rule: "warning RESTRICTED_CIRCULATION_NUMBER: GTIN-8 starting 2", ns: NSGTIN, value: "21234569", valid: true, judgedNS: NSGTIN, norm: "00000021234569", format: FormatGTIN8, warns: WarnRestrictedCirculation, technical: TechnicalWarn},
	{rule: "warning RESTRICTED_CIRCULATION_NUMBER: not for a GTIN-8 starting 5", ns: NSGTIN, value: "50123452", valid: true, judgedNS: NSGTIN, norm: "00000050123452", format: FormatGTIN8, technical: TechnicalPass},
	{rule: "warning COUPON_OR_RESERVED_PREFIX: prefix 050-059", ns: NSGTIN, value: "0501234567890", valid: true, judgedNS: NSGTIN, norm: "00501234567890", format: FormatGTIN13, warns: WarnCouponOrReservedPrefix + " " + WarnGTIN12WrittenAs13Digits, technical: TechnicalWarn},
	{rule: "warning COUPON_OR_RESERVED_PREFIX: prefix 98x", ns: NSGTIN, value: "9812345678902", valid: true, judgedNS: NSGTIN, norm: "09812345678902", format: FormatGTIN13, warns: WarnCouponOrReservedPrefix, technical: TechnicalWarn},
	{rule: "warning COUPON_OR_RESERVED_PREFIX: prefix 99", ns: NSGTIN, value: "9912345678909", valid: true, judgedNS: NSGTIN, norm: "09912345678909", format: FormatGTIN13, warns: WarnCouponOrReservedPrefix, technical: TechnicalWarn},
	{rule: "warning ISSN: prefix 977", ns: NSGTIN, value: "9771234567898", valid: true, judgedNS: NSGTIN, norm: "09771234567898", format: FormatGTIN13, warns: WarnISSN, technical: TechnicalWarn},
	{rule: "warning ISBN: prefix 978", ns: NSGTIN, value: "9781234567897", valid: true, judgedNS: NSGTIN, norm: "09781234567897", format: FormatGTIN13, warns: WarnISBN, technical: TechnicalWarn},
	{rule: "warning ISBN: prefix 979 other than 9790", ns: NSGTIN, value: "9791234567896", valid: true, judgedNS: NSGTIN, norm: "09791234567896", format: FormatGTIN13, warns: WarnISBN, technical: TechnicalWarn},
	{rule: "warning ISMN: prefix 9790", ns: NSGTIN, value: "9790123456785", valid: true, judgedNS: NSGTIN, norm: "09790123456785", format: FormatGTIN13, warns: WarnISMN, technical: TechnicalWarn},
	{rule: "warning DEMO_PREFIX: prefix 952", ns: NSGTIN, value: "9520123456788", valid: true, judgedNS: NSGTIN, norm: "09520123456788", format: FormatGTIN13, warns: WarnDemoPrefix, technical: TechnicalWarn},
	{rule: "warning DEMO_PREFIX: GTIN-14 with indicator 1", ns: NSGTIN, value: "19520123456785", valid: true, judgedNS: NSGTIN, norm: "19520123456785", format: FormatGTIN14, warns: WarnDemoPrefix, technical: TechnicalWarn},
	{rule: "warning GTIN12_WRITTEN_AS_13_DIGITS", ns: NSGTIN, value: "0036000291452", valid: true, judgedNS: NSGTIN, norm: "00036000291452", format: FormatGTIN13, warns: WarnGTIN12WrittenAs13Digits, technical: TechnicalWarn},
	{rule: "warning GTIN12_WRITTEN_AS_13_DIGITS: not for the 14-digit form", ns: NSGTIN, value: "00036000291452", valid: true, judgedNS: NSGTIN, norm: "00036000291452", format: FormatGTIN14, technical: TechnicalPass},
	{rule: "warning VARIABLE_MEASURE_INDICATOR: indicator 9", ns: NSGTIN, value: "99520123456781", valid: true, judgedNS: NSGTIN, norm: "99520123456781", format: FormatGTIN14, warns: WarnVariableMeasureIndicator + " " + WarnDemoPrefix, technical: TechnicalWarn},
	{rule: "warning ALL_ZEROS: GTIN-8", ns: NSGTIN, value: "00000000", valid: true, judgedNS: NSGTIN, norm: "00000000000000", format: FormatGTIN8, warns: WarnAllZeros, technical: TechnicalWarn},
	{rule: "warning ALL_ZEROS: GTIN-14", ns: NSGTIN, value: "00000000000000", valid: true, judgedNS: NSGTIN, norm: "00000000000000", format: FormatGTIN14, warns: WarnAllZeros, technical: TechnicalWarn},
	{rule: "warning ALL_ZEROS: GLN", ns: NSGLN, value: "0000000000000", valid: true, judgedNS: NSGLN, norm: "0000000000000", format: FormatGLN, warns: WarnAllZeros, technical: TechnicalWarn},
	{rule: "warning RESTRICTED_CIRCULATION_NUMBER: GLN prefix 2x", ns: NSGLN, value: "2012345678903", valid: true, judgedNS: NSGLN, norm: "2012345678903", format: FormatGLN, warns: WarnRestrictedCirculation, technical: TechnicalWarn},
	{rule: "warning DEMO_PREFIX: GLN", ns: NSGLN, value: "9520123456788", valid: true, judgedNS: NSGLN, norm: "9520123456788", format: FormatGLN, warns: WarnDemoPrefix, technical: TechnicalWarn},
	{rule: "warnings: a failed value gets no advisories", ns: NSGTIN, value: "9520123456789", judgedNS: NSGTIN, norm: "09520123456789", format: FormatGTIN13, expected: "8", warns: WarnInvalidCheckDigit, technical: TechnicalFail},
}

func TestValidate(t *testing.T) {
	for _, tc := range validateCases {
		t.Run(tc.rule, func(t *testing.T) {
			r, err := Validate(tc.ns, tc.value)
			if tc.err != "" {
				var e *Error
				if !errors.As(err, &e) || e.Code != tc.err {
					t.Fatalf("Validate(%q, %q) error = %v, want code %s", tc.ns, tc.value, err, tc.err)
				}
				if e.Detail == "" {
					t.Error("error without detail")
				}
				return
			}
			if err != nil {
				t.Fatalf("Validate(%q, %q) error = %v", tc.ns, tc.value, err)
			}
			d := r.Data
			if d.Input != tc.value {
				t.Errorf("input = %q", d.Input)
			}
			if r.Ambiguous != tc.ambiguous {
				t.Errorf("ambiguous = %v, want %v", r.Ambiguous, tc.ambiguous)
			}
			gotNS := ""
			if d.Namespace != nil {
				gotNS = *d.Namespace
			}
			if gotNS != tc.judgedNS {
				t.Errorf("namespace = %q, want %q", gotNS, tc.judgedNS)
			}
			if d.Valid != tc.valid {
				t.Errorf("valid = %v, want %v (%v)", d.Valid, tc.valid, r.Warnings)
			}
			if d.Normalized != tc.norm {
				t.Errorf("normalized = %q, want %q", d.Normalized, tc.norm)
			}
			if d.Format != tc.format {
				t.Errorf("format = %q, want %q", d.Format, tc.format)
			}
			if d.ExpectedCheckDigit != tc.expected {
				t.Errorf("expected_check_digit = %q, want %q", d.ExpectedCheckDigit, tc.expected)
			}
			if got := warningCodes(r.Warnings); got != tc.warns {
				t.Errorf("warnings = %q, want %q (%v)", got, tc.warns, r.Warnings)
			}
			if r.Technical != tc.technical {
				t.Errorf("technical = %q, want %q", r.Technical, tc.technical)
			}
			checkReportShape(t, r)
		})
	}
}

// checkReportShape checks what must hold of every report.
func checkReportShape(t *testing.T, r Report) {
	t.Helper()
	d := r.Data
	if r.Ambiguous {
		if d.Namespace != nil || r.Technical != "" || len(d.Candidates) < 2 || d.Subject != "" {
			t.Errorf("ambiguous report shape: %+v", r)
		}
		for _, c := range d.Candidates {
			if c.Valid && c.Subject != c.Namespace+":"+c.Normalized {
				t.Errorf("candidate subject %q does not match %q", c.Subject, c.Normalized)
			}
		}
	} else {
		if d.Namespace == nil || len(d.Candidates) != 0 {
			t.Errorf("single verdict shape: %+v", r)
		}
		if *d.Namespace == NSElementString && d.Subject != "" {
			t.Errorf("element string without a pds namespace has a subject %q", d.Subject)
		}
		if d.Valid && *d.Namespace != NSElementString && d.Subject != *d.Namespace+":"+d.Normalized {
			t.Errorf("subject %q does not match normalized %q", d.Subject, d.Normalized)
		}
		if !d.Valid && d.Subject != "" {
			t.Errorf("invalid value with a subject %q", d.Subject)
		}
	}
	for _, w := range r.Warnings {
		if w.Detail == "" || w.Code == "" {
			t.Errorf("warning without code or detail: %+v", w)
		}
		switch w.Severity {
		case SeverityInfo, SeverityWarn:
			if !d.Valid {
				t.Errorf("advisory %s on an invalid value", w.Code)
			}
		case SeverityError:
			if d.Valid {
				t.Errorf("error %s on a valid value", w.Code)
			}
		default:
			t.Errorf("severity %q", w.Severity)
		}
	}
}

func warningCodes(ws []Warning) string {
	var codes []string
	for _, w := range ws {
		codes = append(codes, w.Code)
	}
	return strings.Join(codes, " ")
}

func TestValidateAmbiguousCandidates(t *testing.T) {
	r, err := Validate("", "4006381333931")
	if err != nil {
		t.Fatal(err)
	}
	pass := &CandidateVerdict{Technical: TechnicalPass}
	want := []Candidate{
		{Namespace: NSGTIN, Valid: true, Normalized: "04006381333931", Subject: "gtin:04006381333931", Format: FormatGTIN13, Validation: pass},
		{Namespace: NSGLN, Valid: true, Normalized: "4006381333931", Subject: "gln:4006381333931", Format: FormatGLN, Validation: pass},
	}
	if !reflect.DeepEqual(r.Data.Candidates, want) {
		t.Errorf("candidates = %+v, want %+v", r.Data.Candidates, want)
	}
	if l := r.Data.Likely; l == nil || l.Subject != "gtin:04006381333931" || l.Reason == "" {
		t.Errorf("likely = %+v", l)
	}
	// Each candidate carries its own advisories: a demo prefix warns in both.
	r, _ = Validate("", "9520123456788")
	for _, c := range r.Data.Candidates {
		if len(c.Warnings) != 1 || c.Warnings[0].Code != WarnDemoPrefix || c.Validation.Technical != TechnicalWarn {
			t.Errorf("candidate %s: %+v", c.Namespace, c)
		}
	}
	// A book prefix says why the GTIN reading is the likely one.
	r, _ = Validate("", "9780306406157")
	if l := r.Data.Likely; l == nil || !strings.Contains(l.Reason, "978") {
		t.Errorf("likely = %+v", l)
	}
}

// subjectCase is one ParseSubject or Identify call.
type subjectCase struct {
	rule  string
	in    string
	want  string // subjects, space-separated; "" with err
	err   string
	inErr string // a word the error detail must hold
}

var parseSubjectCases = []subjectCase{
	{rule: "subject: GTIN-13 padded to 14", in: "gtin:9520123456788", want: "gtin:09520123456788"},
	{rule: "subject: GTIN-8 padded to 14", in: "gtin:96385074", want: "gtin:00000096385074"},
	{rule: "subject: canonical GTIN kept", in: "gtin:09520123456788", want: "gtin:09520123456788"},
	{rule: "subject: GLN", in: "gln:9520123456788", want: "gln:9520123456788"},
	{rule: "subject: SSCC", in: "sscc:195201234567890129", want: "sscc:195201234567890129"},
	{rule: "subject: internal SKU keeps case", in: "internal_sku:AbC-1", want: "internal_sku:AbC-1"},
	{rule: "subject: a SKU spelled like a route", in: "internal_sku:search", want: "internal_sku:search"},
	{rule: "subject: wrong check digit", in: "gtin:9520123456789", err: CodeInvalidIdentifier, inErr: "check digit"},
	{rule: "subject: GLN is not padded", in: "gln:952012345678", err: CodeInvalidIdentifier, inErr: "13 digits"},
	{rule: "subject: unknown namespace", in: "ean:9520123456788", err: CodeInvalidIdentifier, inErr: "unknown namespace"},
	{rule: "subject: namespace is case-sensitive", in: "GTIN:9520123456788", err: CodeInvalidIdentifier, inErr: "unknown namespace"},
	{rule: "subject: auto is not a subject namespace", in: "auto:9520123456788", err: CodeInvalidIdentifier},
	{rule: "subject: no colon", in: "9520123456788", err: CodeInvalidIdentifier, inErr: "namespace:value"},
	{rule: "subject: empty value", in: "gtin:", err: CodeInvalidIdentifier},
	{rule: "subject: bad SKU", in: "internal_sku:a/b", err: CodeInvalidIdentifier},
	{rule: "go trap: subject with non-ASCII digits", in: "gtin:٩٥٢٠١٢٣٤٥٦٧٨٨", err: CodeInvalidIdentifier, inErr: "ASCII"},
}

func TestParseSubject(t *testing.T) {
	for _, tc := range parseSubjectCases {
		t.Run(tc.rule, func(t *testing.T) {
			s, err := ParseSubject(tc.in)
			checkSubjectResult(t, tc, []Subject{s}, err)
		})
	}
}

var identifyCases = []subjectCase{
	{rule: "identify: subject string", in: "gtin:9520123456788", want: "gtin:09520123456788"},
	{rule: "identify: bare GTIN-14", in: "09520123456788", want: "gtin:09520123456788"},
	{rule: "identify: bare GTIN-12", in: "036000291452", want: "gtin:00036000291452"},
	{rule: "identify: bare valid 13 digits give gtin then gln", in: "9520123456788", want: "gtin:09520123456788 gln:9520123456788"},
	{rule: "identify: bare SSCC", in: "195201234567890129", want: "sscc:195201234567890129"},
	{rule: "identify: bare SKU", in: "ABC-123", want: "internal_sku:ABC-123"},
	{rule: "identify: bare route name is a SKU", in: "search", want: "internal_sku:search"},
	{rule: "identify: bare 13 digits with wrong check digit", in: "9520123456789", err: CodeInvalidIdentifier, inErr: "check digit"},
	{rule: "identify: bare 14 digits with wrong check digit", in: "09520123456789", err: CodeInvalidIdentifier, inErr: "check digit"},
	{rule: "identify: bare invalid SKU", in: "a..b", err: CodeInvalidIdentifier},
	{rule: "identify: invalid subject", in: "sscc:1", err: CodeInvalidIdentifier},
	{rule: "identify: empty", in: "", err: CodeInvalidIdentifier},
	{rule: "identify: element string, its GTIN is the identifier", in: "(01)09520123456788(17)261231(10)AB12", want: "gtin:09520123456788"},
	{rule: "identify: scanner data", in: "]C1010952012345678810AB\x1d21S1", want: "gtin:09520123456788"},
	{rule: "identify: element string with a GLN key", in: "(414)9520123456788", want: "gln:9520123456788"},
	{rule: "identify: element string with a ':' in a value is not a subject string", in: "(01)09520123456788(10)A:B", want: "gtin:09520123456788"},
	{rule: "identify: invalid element string", in: "(01)09520123456789", err: CodeInvalidIdentifier, inErr: "check digit"},
	{rule: "identify: element string without a key", in: "(17)261231", err: CodeInvalidIdentifier, inErr: "no primary key"},
	{rule: "identify: element string with a key pds has no namespace for", in: "(8004)9520ABC", err: CodeInvalidIdentifier, inErr: "GIAI"},
}

func TestIdentify(t *testing.T) {
	for _, tc := range identifyCases {
		t.Run(tc.rule, func(t *testing.T) {
			subs, err := Identify(tc.in)
			checkSubjectResult(t, tc, subs, err)
		})
	}
}

func checkSubjectResult(t *testing.T, tc subjectCase, subs []Subject, err error) {
	t.Helper()
	if tc.err != "" {
		var e *Error
		if !errors.As(err, &e) || e.Code != tc.err {
			t.Fatalf("%q: error = %v, want code %s", tc.in, err, tc.err)
		}
		if !strings.Contains(e.Detail, tc.inErr) || len(e.Detail) > maxDetail {
			t.Errorf("detail %q should hold %q", e.Detail, tc.inErr)
		}
		return
	}
	if err != nil {
		t.Fatalf("%q: error %v", tc.in, err)
	}
	var got []string
	for _, s := range subs {
		got = append(got, s.String())
	}
	if strings.Join(got, " ") != tc.want {
		t.Errorf("%q gives %q, want %q", tc.in, got, tc.want)
	}
}

func TestValidGTIN(t *testing.T) {
	tests := []struct {
		rule, in, want string
	}{
		{"fast path: GTIN-8", "96385074", "00000096385074"},
		{"fast path: GTIN-12", "036000291452", "00036000291452"},
		{"fast path: GTIN-13", "9520123456788", "09520123456788"},
		{"fast path: GTIN-14", "19520123456785", "19520123456785"},
		{"fast path: wrong check digit", "9520123456789", ""},
		{"fast path: bad length", "952012345678", ""},
		{"fast path: letter", "952012345678A", ""},
		{"fast path: non-ASCII digit", "952012345678٨", ""},
		{"fast path: empty", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.rule, func(t *testing.T) {
			c, ok := ValidGTIN(tc.in)
			if ok != (tc.want != "") || ok && string(c[:]) != tc.want {
				t.Errorf("ValidGTIN(%q) = %q, %v; want %q", tc.in, c[:], ok, tc.want)
			}
			// The fast path agrees with Validate.
			r, _ := Validate(NSGTIN, tc.in)
			if r.Data.Valid != ok {
				t.Errorf("Validate says valid=%v, ValidGTIN %v", r.Data.Valid, ok)
			}
		})
	}
}

func TestValidGTINAllocatesNothing(t *testing.T) {
	n := testing.AllocsPerRun(100, func() {
		if _, ok := ValidGTIN("09520123456788"); !ok {
			t.Fatal("not valid")
		}
	})
	if n != 0 {
		t.Errorf("ValidGTIN allocates %v times per call", n)
	}
}

func TestErrorDetailIsBounded(t *testing.T) {
	_, err := Validate(strings.Repeat("x", 2000), "1")
	var e *Error
	if !errors.As(err, &e) || len(e.Detail) > maxDetail {
		t.Fatalf("error %v", err)
	}
	if e.Error() == "" {
		t.Error("empty Error()")
	}
}
