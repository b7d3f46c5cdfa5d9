package gs1

import (
	"strconv"
	"strings"
)

// Warning codes of Interpret: what was stripped from an identifier, or
// assumed about it, to read it.
const (
	WarnWhitespaceRemoved   = "WHITESPACE_REMOVED"
	WarnSeparatorsRemoved   = "SEPARATORS_REMOVED"
	WarnLeadingZerosAssumed = "LEADING_ZEROS_ASSUMED"
	WarnReadAsElementString = "READ_AS_ELEMENT_STRING"
	WarnReadAsDigitalLink   = "READ_AS_DIGITAL_LINK"
)

// Reading is one way of reading an identifier as a caller wrote it: the
// subject it names and what was stripped or assumed to get there (nil when
// the value was read as written).
type Reading struct {
	Subject  Subject
	Warnings []Warning
}

// Interpret reads an identifier in the forms people hold (a path
// parameter, a resolve item, a tool argument) and returns every reading in
// order of preference; the caller looks each one up. The forms:
//
//   - a subject string, gtin:09520123456788;
//   - a GS1 Digital Link URI, https://id.gs1.org/01/09520123456788/10/AB:
//     its primary key;
//   - a GS1 element string, bracketed or as a scanner sends it (]C1…, GS
//     separators): its primary key;
//   - raw scanner data without a symbology identifier, 0109520123456788 or
//     010952012345678810AB: its primary key, and the value as an internal
//     SKU;
//   - digits written with spaces or hyphens, 952-0123-456788: the digits,
//     and (when it is one) the value as an internal SKU;
//   - 7, 9, 10 or 11 digits whose check digit is right once zero-padded, a
//     GTIN that lost its leading zeros in a spreadsheet (12345678905): the
//     padded GTIN, and the value as an internal SKU;
//   - anything else, read like Validate with auto: one reading, or a GTIN
//     and a GLN for a valid 13-digit value.
//
// Surrounding white space is removed. A value no reading fits is an *Error
// with Code INVALID_IDENTIFIER.
func Interpret(s string) ([]Reading, error) {
	if t := strings.TrimSpace(s); t != s && t != "" {
		rs, err := Interpret(t)
		w := Warning{Code: WarnWhitespaceRemoved, Severity: SeverityInfo,
			Detail: "white space around " + quote(t) + " was removed"}
		for i := range rs {
			rs[i].Warnings = append([]Warning{w}, rs[i].Warnings...)
		}
		return rs, err
	}
	if c, ok := ValidGTIN(s); ok && len(s) != 13 {
		return []Reading{{Subject: Subject{Namespace: NSGTIN, Value: string(c[:])}}}, nil
	}
	switch {
	case hasHTTPScheme(s):
		r, err := digitalLinkReading(s)
		if err != nil {
			return nil, err
		}
		return []Reading{r}, nil
	case LooksLikeElementString(s):
		r, err := elementStringReading(s)
		if err != nil {
			return nil, err
		}
		return []Reading{r}, nil
	case strings.IndexByte(s, ':') >= 0:
		sub, err := ParseSubject(s)
		if err != nil {
			return nil, err
		}
		return []Reading{{Subject: sub}}, nil
	}
	if rs := scannerReadings(s); rs != nil {
		return rs, nil
	}
	if rs, ok, err := separatedReadings(s); ok {
		return rs, err
	}
	if rs := zeroLostReadings(s); rs != nil {
		return rs, nil
	}
	subs, err := identifyBare(s)
	if err != nil {
		return nil, err
	}
	rs := make([]Reading, len(subs))
	for i, sub := range subs {
		rs[i].Subject = sub
	}
	return rs, nil
}

// Identify reads an identifier like Interpret and returns the subjects of
// its readings, without what was stripped or assumed.
func Identify(s string) ([]Subject, error) {
	rs, err := Interpret(s)
	if err != nil {
		return nil, err
	}
	subs := make([]Subject, len(rs))
	for i, r := range rs {
		subs[i] = r.Subject
	}
	return subs, nil
}

// identifyBare reads a bare value like Validate with auto: every valid
// reading in canonical form.
func identifyBare(s string) ([]Subject, error) {
	r := validateAuto(s)
	if r.Ambiguous {
		var subs []Subject
		for _, c := range r.Data.Candidates {
			if c.Valid {
				subs = append(subs, Subject{Namespace: c.Namespace, Value: c.Normalized})
			}
		}
		return subs, nil
	}
	if !r.Data.Valid {
		return nil, invalidIdentifier(s, *r.Data.Namespace, verdict{warnings: r.Warnings})
	}
	return []Subject{{Namespace: *r.Data.Namespace, Value: r.Data.Normalized}}, nil
}

func hasHTTPScheme(s string) bool {
	return len(s) >= 8 && strings.EqualFold(s[:8], "https://") || len(s) >= 7 && strings.EqualFold(s[:7], "http://")
}

// digitalLinkReading reads a Digital Link URI given as an identifier: its
// primary key, when pds has a namespace for it. The other AIs are set aside.
func digitalLinkReading(s string) (Reading, error) {
	l, err := ParseDigitalLink(s)
	if err != nil {
		return Reading{}, newError(CodeInvalidIdentifier, "the GS1 Digital Link URI "+quote(s)+" does not parse: "+err.(*Error).Detail)
	}
	if l.Primary.Subject == "" {
		return Reading{}, newError(CodeInvalidIdentifier, "the primary key of the GS1 Digital Link URI is AI "+l.Primary.AI+" ("+l.Primary.Name+
			"); pds identifies products by GTIN (01), GLN (414) or SSCC (00)")
	}
	ns, v, _ := strings.Cut(l.Primary.Subject, ":")
	detail := "the GS1 Digital Link URI was read as its primary key " + l.Primary.Subject
	if others := append(append([]Element{}, l.Qualifiers...), l.Attributes...); len(others) > 0 {
		detail += "; " + aiList(others) + " set aside"
	}
	ws := []Warning{{Code: WarnReadAsDigitalLink, Severity: SeverityInfo, Detail: detail}}
	return Reading{Subject: Subject{Namespace: ns, Value: v}, Warnings: append(ws, l.Warnings...)}, nil
}

// elementStringReading reads a GS1 element string: its primary key, when
// pds has a namespace for it. The other AIs are set aside.
func elementStringReading(s string) (Reading, error) {
	es, err := ParseElementString(s)
	if err != nil {
		return Reading{}, err
	}
	return elementReading(es)
}

func elementReading(es *ElementString) (Reading, error) {
	if es.Primary == nil {
		return Reading{}, newError(CodeInvalidIdentifier, "the GS1 element string "+quote(es.Input)+" holds no primary key (such as 00, 01 or 414), so it names no identifier")
	}
	ns := strings.TrimSuffix(subjectPrefix(es.Primary.AI), ":")
	if ns == "" {
		return Reading{}, newError(CodeInvalidIdentifier, "the primary key of the GS1 element string is "+aiName(lookupAI(es.Primary.AI))+
			"; pds identifies products by GTIN (01), GLN (414) or SSCC (00)")
	}
	sub := Subject{Namespace: ns, Value: es.Primary.Value}
	detail := "read as the GS1 element string " + es.ElementString + "; its primary key " + sub.String() + " is the identifier"
	if es.SymbologyIdentifier != "" {
		detail += "; the symbology identifier " + es.SymbologyIdentifier + " (" + symbologies[es.SymbologyIdentifier] + ") was removed"
	}
	var others []Element
	for i := range es.Elements {
		if &es.Elements[i] != es.Primary {
			others = append(others, es.Elements[i])
		}
	}
	if len(others) > 0 {
		detail += "; " + aiList(others) + " set aside"
	}
	ws := []Warning{{Code: WarnReadAsElementString, Severity: SeverityInfo, Detail: detail}}
	return Reading{Subject: sub, Warnings: append(ws, es.Warnings...)}, nil
}

// aiList names AIs and values for a detail: "(10) AB12, (17) 261231".
func aiList(es []Element) string {
	var b strings.Builder
	for i, e := range es {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(" + e.AI + ") " + e.Value)
	}
	return clip(b.String(), 200)
}

// scannerReadings reads scanner data sent without a symbology identifier or
// GS separators: a value that starts with AI 01 and 14 digits, AI 00 and 18,
// or AI 414 and 13, and is longer than the key alone. The element string's
// primary key comes first; the value as an internal SKU, when it is one,
// second. nil when the value does not read as such an element string.
func scannerReadings(s string) []Reading {
	if len(s) < 16 || len(s) == 18 && isDigits(s) {
		return nil
	}
	keyLen := 0
	switch {
	case strings.HasPrefix(s, "01"):
		keyLen = 2 + 14
	case strings.HasPrefix(s, "00"):
		keyLen = 2 + 18
	case strings.HasPrefix(s, "414"):
		keyLen = 3 + 13
	default:
		return nil
	}
	if len(s) < keyLen || !isDigits(s[:keyLen]) {
		return nil
	}
	es, err := ParseElementString(s)
	if err != nil {
		return nil
	}
	r, err := elementReading(es)
	if err != nil {
		return nil
	}
	rs := []Reading{r}
	if v := judgeSKU(s); v.valid {
		rs = append(rs, Reading{Subject: Subject{Namespace: NSInternalSKU, Value: s}})
	}
	return rs
}

// separatedReadings reads digits written with spaces or hyphens between
// them (952-0123-456788, 9520 1234 5678 8): the readings of the digits
// alone, then the value as an internal SKU when it is one. ok is false when
// s is not written so. When the digits make no valid key and the value is no
// internal SKU, the error says what is wrong with the digits.
func separatedReadings(s string) (rs []Reading, ok bool, err error) {
	if s == "" || !isDigitByte(s[0]) || !isDigitByte(s[len(s)-1]) {
		return nil, false, nil
	}
	digits := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case isDigitByte(c):
			digits = append(digits, c)
		case c == ' ' || c == '-':
		default:
			return nil, false, nil
		}
	}
	if len(digits) == len(s) {
		return nil, false, nil
	}
	d := string(digits)
	w := Warning{Code: WarnSeparatorsRemoved, Severity: SeverityInfo,
		Detail: "the spaces and hyphens in " + quote(s) + " were removed; the digits " + d + " were read"}
	keys := zeroLostReadings(d)
	if keys == nil {
		if subs, kerr := identifyBare(d); kerr == nil {
			for _, sub := range subs {
				if sub.Namespace != NSInternalSKU {
					keys = append(keys, Reading{Subject: sub})
				}
			}
		}
	} else {
		keys = keys[:1] // the SKU reading of the digits is not what was written
	}
	for i := range keys {
		keys[i].Warnings = append([]Warning{w}, keys[i].Warnings...)
	}
	rs = keys
	if v := judgeSKU(s); v.valid {
		rs = append(rs, Reading{Subject: Subject{Namespace: NSInternalSKU, Value: s}})
	}
	if len(rs) == 0 {
		return nil, true, digitsFailure(s, d)
	}
	return rs, true, nil
}

// digitsFailure says why the digits of s, written with separators, are no
// GTIN, GLN or SSCC.
func digitsFailure(s, d string) error {
	v := judgeGTIN(d)
	ns := NSGTIN
	if len(d) == 18 {
		v, ns = judgeSSCC(d), NSSSCC
	}
	detail := quote(s) + " is not a valid identifier: its digits " + d + " are no valid " + ns
	if len(v.warnings) > 0 && v.warnings[0].Detail != "" {
		detail += " (" + v.warnings[0].Detail + ")"
	}
	return newError(CodeInvalidIdentifier, detail+", and spaces are not allowed in an internal SKU")
}

// zeroLostReadings reads 7, 9, 10 or 11 digits whose check digit is right
// once zero-padded as a GTIN that lost its leading zeros (a spreadsheet
// drops them from a UPC-A: 012345678905 becomes 12345678905). The padded
// GTIN comes first, the value as an internal SKU second. nil otherwise.
func zeroLostReadings(s string) []Reading {
	switch len(s) {
	case 7, 9, 10, 11:
	default:
		return nil
	}
	if !isDigits(s) || !ValidCheckDigit(s) {
		return nil
	}
	full := 12
	if len(s) == 7 {
		full = 8
	}
	written := zeros[:full-len(s)] + s
	c14 := zeros[:14-len(s)] + s
	w := Warning{Code: WarnLeadingZerosAssumed, Severity: SeverityWarn,
		Detail: s + " has " + strconv.Itoa(len(s)) + " digits, which no GTIN has; read as the " + gtinFormat(full) + " " + written +
			" whose leading zeros were lost (a spreadsheet drops them), gtin:" + c14}
	return []Reading{
		{Subject: Subject{Namespace: NSGTIN, Value: c14}, Warnings: []Warning{w}},
		{Subject: Subject{Namespace: NSInternalSKU, Value: s}},
	}
}

func isDigitByte(c byte) bool { return c >= '0' && c <= '9' }
