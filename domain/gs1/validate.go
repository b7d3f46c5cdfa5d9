package gs1

import (
	"strconv"
	"unicode"
	"unicode/utf8"
)

// Namespaces accepted by Validate. NSAuto (or "") asks Validate to infer one.
const (
	NSGTIN        = "gtin"
	NSGLN         = "gln"
	NSSSCC        = "sscc"
	NSInternalSKU = "internal_sku"
	NSAuto        = "auto"
	// NSElementString is the namespace reported for an element string whose
	// primary key pds has no namespace for (or that has none). It is not a
	// namespace a caller names: auto recognises element strings.
	NSElementString = "element_string"
)

// Warning severities.
const (
	SeverityInfo  = "info"
	SeverityWarn  = "warn"
	SeverityError = "error"
)

// Warning codes. The first four are syntax failures (severity error); the
// rest are advisories on a valid value.
const (
	WarnInvalidCheckDigit        = "INVALID_CHECK_DIGIT"
	WarnInvalidLength            = "INVALID_LENGTH"
	WarnInvalidCharacters        = "INVALID_CHARACTERS"
	WarnInvalidFormat            = "INVALID_FORMAT"
	WarnRestrictedCirculation    = "RESTRICTED_CIRCULATION_NUMBER"
	WarnCouponOrReservedPrefix   = "COUPON_OR_RESERVED_PREFIX"
	WarnISSN                     = "ISSN"
	WarnISBN                     = "ISBN"
	WarnISMN                     = "ISMN"
	WarnDemoPrefix               = "DEMO_PREFIX"
	WarnGTIN12WrittenAs13Digits  = "GTIN12_WRITTEN_AS_13_DIGITS"
	WarnVariableMeasureIndicator = "VARIABLE_MEASURE_INDICATOR"
	WarnAllZeros                 = "ALL_ZEROS"
	WarnLooksLikeGS1Key          = "LOOKS_LIKE_GS1_KEY"
	WarnZeroSuppressedGTIN       = "ZERO_SUPPRESSED_GTIN"
	WarnTrailingSlash            = "TRAILING_SLASH"
	WarnRequisiteAIMissing       = "REQUISITE_AI_MISSING"
	WarnEncodedAI                = "PERCENT_ENCODED_AI"
)

// Formats reported in ValidationData.Format.
const (
	FormatGTIN8       = "GTIN-8"
	FormatGTIN12      = "GTIN-12"
	FormatGTIN13      = "GTIN-13"
	FormatGTIN14      = "GTIN-14"
	FormatGLN         = "GLN"
	FormatSSCC        = "SSCC"
	FormatInternalSKU = "INTERNAL_SKU"
)

// Values of Report.Technical.
const (
	TechnicalPass = "pass"
	TechnicalWarn = "warn"
	TechnicalFail = "fail"
)

// maxSKULength is the longest internal SKU pds accepts.
const maxSKULength = 64

// Warning is one finding about a value: a syntax failure or an advisory.
type Warning struct {
	Code     string `json:"code"`
	Severity string `json:"severity"` // info, warn or error
	Detail   string `json:"detail,omitempty"`
}

// Candidate is one reading of an ambiguous value, judged on its own: its
// format, its technical verdict and its own advisories.
type Candidate struct {
	Namespace  string            `json:"namespace"`
	Valid      bool              `json:"valid"`
	Normalized string            `json:"normalized"`
	Subject    string            `json:"subject"`
	Format     string            `json:"format,omitempty"`
	Validation *CandidateVerdict `json:"validation,omitempty"`
	Warnings   []Warning         `json:"warnings,omitempty"`
}

// CandidateVerdict is a candidate's validation: its technical axis.
type CandidateVerdict struct {
	Technical string `json:"technical"`
}

// Likely names the reading of an ambiguous value that is the likely one,
// and why.
type Likely struct {
	Namespace string `json:"namespace"`
	Subject   string `json:"subject"`
	Reason    string `json:"reason"`
}

// ValidationData is the `data` member of the validate endpoint.
type ValidationData struct {
	Input              string      `json:"input"`
	Namespace          *string     `json:"namespace"` // the one judged, or null when ambiguous
	Valid              bool        `json:"valid"`
	Normalized         string      `json:"normalized"`
	Subject            string      `json:"subject,omitempty"`
	Format             string      `json:"format,omitempty"`
	ExpectedCheckDigit string      `json:"expected_check_digit,omitempty"`
	Candidates         []Candidate `json:"candidates,omitempty"`
	// Likely says which candidate is the likely reading, and why (with
	// ambiguous).
	Likely *Likely `json:"likely,omitempty"`
	// For an element string: its primary key (the identifier judged), the
	// other AIs in order, the bracketed form, the Digital Link on
	// https://id.gs1.org and the scanner's symbology identifier.
	Primary             *Element  `json:"primary,omitempty"`
	Elements            []Element `json:"elements,omitempty"`
	ElementString       string    `json:"element_string,omitempty"`
	DigitalLink         string    `json:"digital_link,omitempty"`
	SymbologyIdentifier string    `json:"symbology_identifier,omitempty"`
}

// Report is the whole verdict of Validate.
type Report struct {
	Data      ValidationData
	Ambiguous bool      // several namespaces fit (envelope status "ambiguous")
	Technical string    // "pass", "warn" (valid with warnings), "fail"; "" when ambiguous
	Warnings  []Warning // syntax failures and advisories
}

// Namespace names as addressable values, so that ValidationData.Namespace
// can point at them without allocating.
var (
	nsGTIN        = NSGTIN
	nsGLN         = NSGLN
	nsSSCC        = NSSSCC
	nsInternalSKU = NSInternalSKU
	nsElement     = NSElementString
)

// Validate judges value in namespace ("" means auto). An unknown namespace is
// an *Error with Code UNSUPPORTED_NAMESPACE. The caller enforces the 256
// character limit on value.
//
// Under auto: 8, 12 or 14 ASCII digits are judged as a GTIN, 18 as an SSCC;
// 13 digits with a right check digit are ambiguous (GTIN and GLN, both
// listed in Candidates), 13 with a wrong one are judged as a GTIN. Anything
// else is judged as an internal SKU.
func Validate(namespace, value string) (Report, error) {
	switch namespace {
	case "", NSAuto:
		return validateAuto(value), nil
	case NSGTIN:
		return judgeGTIN(value).report(), nil
	case NSGLN:
		return judgeGLN(value).report(), nil
	case NSSSCC:
		return judgeSSCC(value).report(), nil
	case NSInternalSKU:
		return judgeSKU(value).report(), nil
	}
	return Report{}, newError(CodeUnsupportedNamespace,
		"namespace "+quote(namespace)+" is not supported; use gtin, gln, sscc, internal_sku or auto")
}

// verdict is the judgement of a value in one namespace.
type verdict struct {
	input      string
	ns         *string
	valid      bool
	normalized string
	subject    string
	format     string
	expected   string
	warnings   []Warning
}

func (v verdict) report() Report {
	r := Report{
		Data: ValidationData{
			Input:              v.input,
			Namespace:          v.ns,
			Valid:              v.valid,
			Normalized:         v.normalized,
			Subject:            v.subject,
			Format:             v.format,
			ExpectedCheckDigit: v.expected,
		},
		Warnings: v.warnings,
	}
	switch {
	case !v.valid:
		r.Technical = TechnicalFail
	case len(v.warnings) > 0:
		r.Technical = TechnicalWarn
	default:
		r.Technical = TechnicalPass
	}
	return r
}

func validateAuto(value string) Report {
	if LooksLikeElementString(value) {
		return validateElementString(value)
	}
	if isDigits(value) {
		switch len(value) {
		case 8, 12, 14:
			return judgeGTIN(value).report()
		case 18:
			return judgeSSCC(value).report()
		case 13:
			if !ValidCheckDigit(value) {
				return judgeGTIN(value).report()
			}
			return ambiguous13(value)
		}
	}
	return judgeSKU(value).report()
}

// validateElementString judges a GS1 element string (auto, when the value
// is written like one). Its primary key is the identifier: a GTIN, GLN or
// SSCC is judged in its namespace, with its advisories; other keys are
// reported in the namespace element_string. The other AIs are listed in
// Elements. An element string that does not parse, or that holds no
// primary key, is invalid.
func validateElementString(value string) Report {
	es, err := ParseElementString(value)
	if err != nil {
		return verdict{input: value, ns: &nsElement, normalized: value,
			warnings: failure(WarnInvalidFormat, "the GS1 element string is not valid: "+err.(*Error).Detail)}.report()
	}
	var v verdict
	if es.Primary == nil {
		v = verdict{input: value, ns: &nsElement, normalized: es.ElementString,
			warnings: failure(WarnInvalidFormat, "the GS1 element string holds no primary key (such as 00, 01 or 414), so it names no identifier")}
	} else {
		switch es.Primary.AI {
		case "01":
			v = judgeGTIN(es.Primary.Value)
		case "414":
			v = judgeGLN(es.Primary.Value)
		case "00":
			v = judgeSSCC(es.Primary.Value)
		default:
			v = verdict{ns: &nsElement, valid: true, normalized: es.Primary.Value}
		}
		v.input = value
		v.warnings = append(es.Warnings[:len(es.Warnings):len(es.Warnings)], v.warnings...)
	}
	r := v.report()
	r.Data.Primary = es.Primary
	r.Data.Elements = []Element{}
	for i := range es.Elements {
		if es.Primary == nil || &es.Elements[i] != es.Primary {
			r.Data.Elements = append(r.Data.Elements, es.Elements[i])
		}
	}
	r.Data.ElementString = es.ElementString
	r.Data.DigitalLink = es.DigitalLink
	r.Data.SymbologyIdentifier = es.SymbologyIdentifier
	return r
}

// ambiguous13 answers a 13-digit value with a right check digit, which is a
// valid GTIN-13 and a valid GLN alike.
func ambiguous13(value string) Report {
	g := judgeGTIN(value)
	l := judgeGLN(value)
	r := Report{
		Data: ValidationData{
			Input:      value,
			Valid:      g.valid && l.valid,
			Normalized: value,
			Candidates: []Candidate{g.candidate(), l.candidate()},
			Likely:     &Likely{Namespace: NSGTIN, Subject: g.subject, Reason: likelyGTINReason(g.normalized)},
		},
		Ambiguous: true,
	}
	// The advisories of both readings, each code once.
	r.Warnings = append(r.Warnings, g.warnings...)
	for _, w := range l.warnings {
		dup := false
		for _, x := range r.Warnings {
			if x.Code == w.Code {
				dup = true
				break
			}
		}
		if !dup {
			r.Warnings = append(r.Warnings, w)
		}
	}
	return r
}

// candidate is v as one candidate of an ambiguous value.
func (v verdict) candidate() Candidate {
	r := v.report()
	return Candidate{Namespace: *v.ns, Valid: v.valid, Normalized: v.normalized, Subject: v.subject,
		Format: v.format, Validation: &CandidateVerdict{Technical: r.Technical}, Warnings: v.warnings}
}

// likelyGTINReason says why a valid 13-digit value is more likely a GTIN-13
// than a GLN, from its 14-digit GTIN form. The digits alone cannot settle
// it; what they can say is said first.
func likelyGTINReason(c14 string) string {
	d := c14[1:]
	switch {
	case d[0] == '0':
		return "it starts with 0: a UPC-A (GTIN-12) written with 13 digits, which is a product number"
	case d[:3] == "978" || d[:3] == "979" || d[:3] == "977":
		return "prefix " + d[:3] + " marks a book, serial or printed music, which carry GTIN-13s"
	case d[0] == '2':
		return "prefix 2 marks in-store and variable-measure product numbers, which are GTIN-13s"
	}
	return "13 digits on a product or from a barcode scan are an EAN-13, which carries a GTIN-13; a GLN names a party or location " +
		"and is rarely given alone. The digits cannot settle it: use the gln subject if a location is meant"
}

// isDigits reports whether s is one or more ASCII digits. Non-ASCII digits
// (Arabic-Indic, fullwidth…) are not digits here.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// badDigitChar describes the first character of s that is not an ASCII
// digit, for a detail message. s must hold one.
func badDigitChar(s string) string {
	pos := 0
	for i, r := range s {
		pos++
		if r >= '0' && r <= '9' {
			continue
		}
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size <= 1 {
				return "byte 0x" + strconv.FormatUint(uint64(s[i]), 16) + " (not UTF-8) at position " + strconv.Itoa(pos)
			}
		}
		desc := strconv.QuoteRune(r) + " (" + unicodeName(r) + ") at position " + strconv.Itoa(pos)
		if unicode.IsDigit(r) {
			desc += "; only ASCII digits 0-9 are accepted"
		}
		return desc
	}
	return ""
}

func unicodeName(r rune) string {
	s := strconv.FormatInt(int64(r), 16)
	for len(s) < 4 {
		s = "0" + s
	}
	b := []byte("U+" + s)
	for i := range b {
		if b[i] >= 'a' && b[i] <= 'f' {
			b[i] -= 'a' - 'A'
		}
	}
	return string(b)
}

func failure(code, detail string) []Warning {
	return []Warning{{Code: code, Severity: SeverityError, Detail: detail}}
}

// judgeDigits runs the checks shared by the digit namespaces: characters,
// length, check digit. On success it returns ok; otherwise v is the failed
// verdict.
func judgeDigits(value string, ns *string, what string, lengths []int, lengthText string) (v verdict, ok bool) {
	v = verdict{input: value, ns: ns, normalized: value}
	if value == "" {
		v.warnings = failure(WarnInvalidLength, "the value is empty; "+what+" has "+lengthText)
		return v, false
	}
	if !isDigits(value) {
		v.warnings = failure(WarnInvalidCharacters, what+" holds only the digits 0-9; found "+badDigitChar(value))
		return v, false
	}
	fits := false
	for _, n := range lengths {
		if len(value) == n {
			fits = true
		}
	}
	if !fits {
		v.warnings = failure(WarnInvalidLength, what+" has "+lengthText+", not "+strconv.Itoa(len(value)))
		return v, false
	}
	return v, true
}

func checkDigitFailure(v *verdict, value, formatName string) bool {
	want, _ := CheckDigit(value[:len(value)-1])
	got := value[len(value)-1]
	if want == got {
		return false
	}
	v.expected = string(rune(want))
	v.warnings = failure(WarnInvalidCheckDigit,
		"the "+formatName+" check digit is "+string(rune(want))+", not "+string(rune(got)))
	return true
}

var gtinLengths = []int{8, 12, 13, 14}

func gtinFormat(n int) string {
	switch n {
	case 8:
		return FormatGTIN8
	case 12:
		return FormatGTIN12
	case 13:
		return FormatGTIN13
	}
	return FormatGTIN14
}

func judgeGTIN(value string) verdict {
	v, ok := judgeDigits(value, &nsGTIN, "a GTIN", gtinLengths, "8, 12, 13 or 14 digits")
	if !ok {
		return v
	}
	v.format = gtinFormat(len(value))
	subject := "gtin:" + zeros[:14-len(value)] + value
	v.normalized = subject[len("gtin:"):]
	if checkDigitFailure(&v, value, v.format) {
		return v
	}
	v.valid = true
	v.subject = subject
	v.warnings = gtinAdvisories(v.normalized, len(value))
	return v
}

func judgeGLN(value string) verdict {
	v, ok := judgeDigits(value, &nsGLN, "a GLN", []int{13}, "13 digits")
	if !ok {
		return v
	}
	v.format = FormatGLN
	if checkDigitFailure(&v, value, FormatGLN) {
		return v
	}
	v.valid = true
	v.subject = "gln:" + value
	v.normalized = v.subject[len("gln:"):]
	v.warnings = keyAdvisories(value, "GLN")
	return v
}

func judgeSSCC(value string) verdict {
	v, ok := judgeDigits(value, &nsSSCC, "an SSCC", []int{18}, "18 digits")
	if !ok {
		return v
	}
	v.format = FormatSSCC
	if checkDigitFailure(&v, value, FormatSSCC) {
		return v
	}
	v.valid = true
	v.subject = "sscc:" + value
	v.normalized = v.subject[len("sscc:"):]
	// The company prefix of an SSCC starts after the extension digit.
	if allZeros(value) {
		v.warnings = keyAdvisories(value, "SSCC")
	} else {
		v.warnings = keyAdvisories(value[1:], "SSCC")
	}
	return v
}

func judgeSKU(value string) verdict {
	v := verdict{input: value, ns: &nsInternalSKU, normalized: value}
	for i := 0; i < len(value); i++ {
		if !skuChar(value[i]) {
			v.warnings = failure(WarnInvalidCharacters,
				"an internal SKU holds only A-Z, a-z, 0-9 and the separators - _ . ; found "+badSKUChar(value))
			return v
		}
	}
	if value == "" || len(value) > maxSKULength {
		v.warnings = failure(WarnInvalidLength,
			"an internal SKU has 1 to 64 characters, not "+strconv.Itoa(len(value)))
		return v
	}
	if isSep(value[0]) || isSep(value[len(value)-1]) {
		v.warnings = failure(WarnInvalidFormat, "an internal SKU starts and ends with a letter or digit")
		return v
	}
	for i := 1; i < len(value); i++ {
		if isSep(value[i]) && isSep(value[i-1]) {
			v.warnings = failure(WarnInvalidFormat,
				"separators in an internal SKU stand alone; found "+strconv.Quote(value[i-1:i+1])+" at position "+strconv.Itoa(i))
			return v
		}
	}
	v.valid = true
	v.format = FormatInternalSKU
	v.subject = "internal_sku:" + value
	v.normalized = value
	if isDigits(value) && ValidCheckDigit(value) {
		var key string
		switch len(value) {
		case 8, 12, 14:
			key = "a valid " + gtinFormat(len(value))
		case 13:
			key = "a valid GTIN-13 and GLN"
		case 18:
			key = "a valid SSCC"
		}
		if key != "" {
			v.warnings = []Warning{{Code: WarnLooksLikeGS1Key, Severity: SeverityWarn,
				Detail: "this internal SKU is also " + key + "; make sure the namespace is the intended one"}}
		}
	}
	return v
}

func skuChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || isSep(c)
}

func isSep(c byte) bool { return c == '-' || c == '_' || c == '.' }

func badSKUChar(s string) string {
	pos := 0
	for i, r := range s {
		pos++
		if r < utf8.RuneSelf && skuChar(byte(r)) {
			continue
		}
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size <= 1 {
				return "byte 0x" + strconv.FormatUint(uint64(s[i]), 16) + " (not UTF-8) at position " + strconv.Itoa(pos)
			}
		}
		desc := strconv.QuoteRune(r) + " (" + unicodeName(r) + ") at position " + strconv.Itoa(pos)
		if unicode.IsDigit(r) {
			desc += "; only ASCII digits 0-9 are accepted"
		}
		return desc
	}
	return ""
}

const zeros = "000000000000000000"

func allZeros(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '0' {
			return false
		}
	}
	return true
}

// gtinAdvisories gives the advisories on a valid GTIN in its 14-digit form;
// inputLen is the length it was written with.
func gtinAdvisories(c14 string, inputLen int) []Warning {
	if allZeros(c14) {
		return []Warning{{Code: WarnAllZeros, Severity: SeverityWarn, Detail: "every digit is zero; this is not an assigned GTIN"}}
	}
	var ws []Warning
	if c14[0] == '9' {
		ws = append(ws, Warning{Code: WarnVariableMeasureIndicator, Severity: SeverityWarn,
			Detail: "indicator digit 9 marks a variable measure trade item"})
	}
	if c14[:6] == "000000" {
		// A GTIN-8 (GTIN-12s never start with 00000).
		if c14[6] == '0' || c14[6] == '2' {
			ws = append(ws, Warning{Code: WarnRestrictedCirculation, Severity: SeverityWarn,
				Detail: "a GTIN-8 starting with " + c14[6:7] + " is a restricted circulation number, not globally unique"})
		}
		return ws
	}
	ws = append(ws, prefixAdvisories(c14[1:], "GTIN")...)
	if inputLen == 13 && c14[1] == '0' {
		ws = append(ws, Warning{Code: WarnGTIN12WrittenAs13Digits, Severity: SeverityInfo,
			Detail: "a GTIN-13 starting with 0 is a GTIN-12 (UPC-A) written with 13 digits"})
	}
	return ws
}

// keyAdvisories gives the advisories for a GLN or an SSCC, from the digits
// where its company prefix starts.
func keyAdvisories(digits, what string) []Warning {
	if allZeros(digits) {
		return []Warning{{Code: WarnAllZeros, Severity: SeverityWarn, Detail: "every digit is zero; this is not an assigned " + what}}
	}
	return prefixAdvisories(digits, what)
}

// prefixAdvisories reads the GS1 prefix at the start of digits (at least
// four digits: the 13 significant digits of a GTIN, a GLN, or an SSCC after
// its extension digit).
func prefixAdvisories(d, what string) []Warning {
	var code, detail string
	sev := SeverityWarn
	switch {
	case d[0] == '2' || d[:2] == "02":
		code, detail = WarnRestrictedCirculation, "prefix "+rcnPrefix(d)+" is for restricted circulation (in-store or variable measure numbers); the "+what+" is not globally unique"
	case d[:2] == "04":
		// 040-049 only: 400-499 are national GS1 prefixes (400-440 GS1
		// Germany, 450-459 and 490-499 GS1 Japan, …), not restricted numbers.
		code, detail = WarnRestrictedCirculation, "prefix 04 is for restricted circulation within a company; the "+what+" is not globally unique"
	case d[:2] == "05":
		code, detail = WarnCouponOrReservedPrefix, "prefix "+d[:3]+" is reserved for coupons"
	case d[:2] == "98":
		code, detail = WarnCouponOrReservedPrefix, "prefix "+d[:3]+" is reserved for coupons and refund receipts"
	case d[:2] == "99":
		code, detail = WarnCouponOrReservedPrefix, "prefix 99 is reserved for coupons"
	case d[:3] == "977":
		code, detail, sev = WarnISSN, "prefix 977 marks a serial publication (ISSN)", SeverityInfo
	case d[:4] == "9790":
		code, detail, sev = WarnISMN, "prefix 9790 marks printed music (ISMN)", SeverityInfo
	case d[:3] == "978" || d[:3] == "979":
		code, detail, sev = WarnISBN, "prefix "+d[:3]+" marks a book (ISBN)", SeverityInfo
	case d[:3] == "952":
		code, detail = WarnDemoPrefix, "prefix 952 is the GS1 prefix for examples and demonstrations; it identifies no real "+lowerWhat(what)
	default:
		return nil
	}
	return []Warning{{Code: code, Severity: sev, Detail: detail}}
}

// rcnPrefix names a restricted circulation prefix: 02 or 20-29.
func rcnPrefix(d string) string {
	if d[0] == '0' {
		return d[:2]
	}
	return "2x"
}

func lowerWhat(what string) string {
	switch what {
	case "GTIN":
		return "product"
	case "GLN":
		return "location"
	}
	return "logistic unit"
}
