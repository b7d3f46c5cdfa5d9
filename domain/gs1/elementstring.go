package gs1

import (
	"strconv"
	"strings"
)

// Forms of an element string, as ElementString.Form reports them.
const (
	FormBracketed = "bracketed" // (01)09520123456788(10)AB12
	FormFNC1      = "fnc1"      // 0109520123456788 10AB12 with GS (or ^) after variable-length values
)

// gs is the ASCII group separator that scanners send for FNC1.
const gs = 0x1D

// maxElementStringLength is the longest element string pds reads. The
// longest barcode payloads (DataMatrix, QR) stay well below it.
const maxElementStringLength = 4096

// ElementString is a parsed GS1 element string.
type ElementString struct {
	Input string `json:"input"`
	Form  string `json:"form"` // FormBracketed or FormFNC1
	// SymbologyIdentifier is the ]xy prefix a scanner sent (]C1, ]e0,
	// ]d2, ]Q3, ]J1, ]E0, ]E4), or "".
	SymbologyIdentifier string `json:"symbology_identifier,omitempty"`
	// Primary is the first AI that is a GS1 Digital Link primary key
	// (00, 01, 414, …), or nil when there is none.
	Primary  *Element  `json:"primary"`
	Elements []Element `json:"elements"` // every AI in input order, repeats merged; never nil
	// ElementString is the bracketed form in input order, '(' in a value
	// written as "\(".
	ElementString string `json:"element_string"`
	// DigitalLink is the element string as a Digital Link URI on
	// https://id.gs1.org: the primary key, its key qualifiers in the path,
	// the other AIs as query attributes. "" when the AIs cannot be written
	// as one (no primary key, or an AI that is not allowed as a data
	// attribute); a NO_DIGITAL_LINK warning says why.
	DigitalLink string `json:"digital_link,omitempty"`
	// Warnings: ZERO_SUPPRESSED_GTIN, REQUISITE_AI_MISSING, NO_DIGITAL_LINK.
	Warnings []Warning `json:"-"`
}

// WarnNoDigitalLink says why an element string has no Digital Link form.
const WarnNoDigitalLink = "NO_DIGITAL_LINK"

// symbologies are the symbology identifiers pds reads: GS1 AI data in the
// GS1 modes of GS1-128, DataBar, DataMatrix, QR Code and DotCode, and the
// bare GTIN of EAN-13/UPC-A and EAN-8.
var symbologies = map[string]string{
	"]C1": "GS1-128", "]e0": "GS1 DataBar", "]d2": "GS1 DataMatrix", "]Q3": "GS1 QR Code",
	"]J1": "GS1 DotCode", "]E0": "EAN-13 or UPC-A", "]E4": "EAN-8",
}

// LooksLikeElementString reports whether s is written like a GS1 element
// string: bracketed ("(01)…"), with a symbology identifier ("]C1…"), with
// an FNC1 written as a GS character, or starting with '^' for FNC1. A bare
// run of digits does not count: it is read as a key of its own.
func LooksLikeElementString(s string) bool {
	if s == "" {
		return false
	}
	if s[0] == '(' || s[0] == '^' || s[0] == ']' {
		return true
	}
	return indexByte(s, gs) >= 0
}

// ParseElementString reads a GS1 element string in the bracketed form
// ((01)09520123456788(10)AB12) or the form scanners send (AIs and values
// run together, a GS character or '^' after each variable-length value),
// with or without a symbology identifier. Every value is checked against
// its AI's format and linters, as in a Digital Link URI; the same AI twice
// must have the same value; ex= pairings and a digital signature without a
// serialised key are errors, a missing req= partner a warning. Errors are
// *Error with Code INVALID_IDENTIFIER.
func ParseElementString(s string) (*ElementString, error) {
	if s == "" {
		return nil, invalid("the element string is empty")
	}
	if len(s) > maxElementStringLength {
		return nil, invalid("the element string is " + strconv.Itoa(len(s)) + " characters long; the limit is " + strconv.Itoa(maxElementStringLength))
	}
	blk := new(esBlock)
	es := &blk.es
	es.Input = s
	data := s
	if data[0] == ']' {
		if len(data) < 3 {
			return nil, invalid("the symbology identifier " + quote(data) + " is cut short; it has three characters, such as ]C1")
		}
		sym := data[:3]
		if _, ok := symbologies[sym]; !ok {
			return nil, invalid("symbology identifier " + quote(sym) + " does not mark GS1 data; pds reads ]C1, ]e0, ]d2, ]Q3, ]J1, ]E0 and ]E4")
		}
		es.SymbologyIdentifier = sym
		data = data[3:]
	}
	var elemBuf [8]element
	elems := elemBuf[:0]
	var err *Error
	switch {
	case es.SymbologyIdentifier == "]E0" || es.SymbologyIdentifier == "]E4":
		es.Form = FormFNC1
		elems, err = readLinearGTIN(elems, data, es.SymbologyIdentifier)
	case es.SymbologyIdentifier == "" && data != "" && data[0] == '(':
		es.Form = FormBracketed
		elems, err = readBracketed(elems, data, &es.Warnings)
	default:
		es.Form = FormFNC1
		elems, err = readFNC1(elems, data)
	}
	if err != nil {
		return nil, err
	}
	if msg := exclusions(elems); msg != "" {
		return nil, invalid(msg)
	}
	if msg := digsigSerial(elems); msg != "" {
		return nil, invalid(msg)
	}
	es.Warnings = append(es.Warnings, requisites(elems, "data")...)
	return buildElementString(blk, elems), nil
}

// addElement appends AI d with value v, merging an exact repeat (the same
// AI read from two carriers) and refusing a repeat with another value.
func addElement(elems []element, d *aiDef, v string) ([]element, *Error) {
	for _, e := range elems {
		if e.def == d {
			if e.value == v {
				return elems, nil
			}
			return nil, invalid(aiName(d) + " appears twice with different values (" + quote(e.value) + " and " + quote(v) + ")")
		}
	}
	if msg := checkAIValue(d, v); msg != "" {
		return nil, invalid("the value " + quote(v) + " of " + aiName(d) + " " + msg)
	}
	return append(elems, element{d, v}), nil
}

// readBracketed reads (AI)value pairs. A value runs to the next '(' that is
// not escaped as "\(".
func readBracketed(elems []element, s string, warnings *[]Warning) ([]element, *Error) {
	for len(s) > 0 {
		if s[0] != '(' {
			return nil, invalid("expected '(' to open an AI, found " + describeByte(s, 0))
		}
		end := indexByte(s, ')')
		if end < 0 {
			return nil, invalid("the AI " + quote(s[:min(len(s), 6)]) + " is not closed with ')'")
		}
		ai := s[1:end]
		d := lookupAI(ai)
		if d == nil {
			if !isDigits(ai) || len(ai) < 2 || len(ai) > 4 {
				return nil, invalid(quote("("+ai+")") + " is not an AI: an AI is 2 to 4 digits")
			}
			return nil, invalid("no GS1 AI " + ai + " exists")
		}
		s = s[end+1:]
		// The value: up to the next unescaped '('.
		n, escaped := 0, false
		for n < len(s) && s[n] != '(' {
			if s[n] == '\\' && n+1 < len(s) && s[n+1] == '(' {
				escaped = true
				n += 2
				continue
			}
			n++
		}
		v := s[:n]
		s = s[n:]
		if escaped {
			v = strings.ReplaceAll(v, `\(`, "(")
		}
		if v == "" {
			return nil, invalid(aiName(d) + " has no value")
		}
		v, w := zeroSuppressed(d, v)
		if w != nil {
			*warnings = append(*warnings, *w)
		}
		var err *Error
		if elems, err = addElement(elems, d, v); err != nil {
			return nil, err
		}
	}
	return elems, nil
}

// readFNC1 reads AIs and values run together: an AI of predefined length
// ends after its length (or at an FNC1), any other at the next FNC1 (a GS
// character, or '^') or the end. A leading FNC1 is skipped.
func readFNC1(elems []element, s string) ([]element, *Error) {
	if s != "" && (s[0] == gs || s[0] == '^') {
		s = s[1:]
	}
	if s == "" {
		return nil, invalid("the element string holds no AI")
	}
	for len(s) > 0 {
		d := prefixAI(s)
		if d == nil {
			return nil, invalid("no GS1 AI starts the data " + quote(s[:min(len(s), 8)]))
		}
		s = s[len(d.ai):]
		end := 0
		for end < len(s) && s[end] != gs && s[end] != '^' {
			end++
		}
		if d.fixedLen {
			if n := predefinedLength(d); n < end {
				end = n
			}
		}
		v := s[:end]
		if v == "" {
			return nil, invalid(aiName(d) + " has no value")
		}
		s = s[end:]
		if s != "" && (s[0] == gs || s[0] == '^') {
			s = s[1:] // a final FNC1 is tolerated too
		}
		var err *Error
		if elems, err = addElement(elems, d, v); err != nil {
			return nil, err
		}
	}
	return elems, nil
}

// readLinearGTIN reads the 13 or 8 digits of an EAN-13/UPC-A or EAN-8 scan
// as AI 01.
func readLinearGTIN(elems []element, s, sym string) ([]element, *Error) {
	want := 13
	if sym == "]E4" {
		want = 8
	}
	if len(s) != want || !isDigits(s) {
		return nil, invalid(sym + " data is a GTIN of " + strconv.Itoa(want) + " digits, not " + quote(s))
	}
	d := lookupAI("01")
	v, _ := zeroSuppressed(d, s)
	return addElement(elems, d, v)
}

// prefixAI finds the AI that starts s. GS1 AIs are prefix-free, so at most
// one of the 2-, 3- and 4-digit readings exists.
func prefixAI(s string) *aiDef {
	for n := 2; n <= 4 && n <= len(s); n++ {
		if !isDigits(s[:n]) {
			return nil
		}
		if d := aiIndex[n-2][num(s[:n])]; d != nil {
			return d
		}
	}
	return nil
}

// predefinedLength is the length of the value of an AI of predefined
// length: the sum of its components.
func predefinedLength(d *aiDef) int {
	n := 0
	for _, c := range d.comps {
		n += int(c.max)
	}
	return n
}

// buildElementString gives the parsed element string: the primary key,
// the elements, the bracketed form and the Digital Link, the strings cut
// from one buffer.
func buildElementString(blk *esBlock, elems []element) *ElementString {
	es := &blk.es
	// The primary key: the first primary-key AI that the other AIs can
	// accompany in a Digital Link (with (8017)…(8019)…(415)…, 8019 is a
	// qualifier of 8017, so 8017 is the key), else the first one.
	primary := -1
	reason := ""
	var order [8]int
	dlOrder := order[:0]
	nq := 0
	for i, e := range elems {
		if !e.def.dlpkey {
			continue
		}
		o, n, why := digitalLinkOrder(dlOrder, elems, i)
		if primary < 0 || why == "" {
			primary, dlOrder, nq, reason = i, o, n, why
		}
		if why == "" {
			break
		}
	}
	if primary < 0 {
		reason = "the element string holds no GS1 Digital Link primary key (such as 00, 01 or 414)"
	}
	if reason != "" {
		dlOrder = dlOrder[:0]
		es.Warnings = append(es.Warnings, Warning{Code: WarnNoDigitalLink, Severity: SeverityInfo, Detail: reason})
	}
	n := escapedExtra(elems) * 2
	for _, e := range elems {
		n += 2*(len(e.def.ai)+len(e.value)+2) + len(subjectPrefix(e.def.ai)) + len(e.value)
	}
	if len(dlOrder) > 0 {
		n += len(CanonicalHost)
	}
	var b strings.Builder
	b.Grow(n)
	for _, e := range elems {
		b.WriteByte('(')
		b.WriteString(e.def.ai)
		b.WriteByte(')')
		writeBracketValue(&b, e.value)
	}
	esEnd := b.Len()
	if len(dlOrder) > 0 {
		b.WriteString(CanonicalHost)
		for k, i := range dlOrder {
			writeCanonicalElement(&b, k, nq, elems[i].def.ai, elems[i].value)
		}
	}
	dlEnd := b.Len()
	// The subject strings (gtin:…) follow, cut from the same buffer.
	for _, e := range elems {
		if p := subjectPrefix(e.def.ai); p != "" {
			b.WriteString(p)
			b.WriteString(e.value)
		}
	}
	all := b.String()
	es.ElementString, es.DigitalLink = all[:esEnd], all[esEnd:dlEnd]

	var out []Element
	if len(elems) <= len(blk.elems) {
		out = blk.elems[:len(elems):len(elems)]
	} else {
		out = make([]Element, len(elems))
	}
	off := dlEnd
	for i, e := range elems {
		out[i] = Element{AI: e.def.ai, Name: e.def.title, Value: e.value}
		if p := subjectPrefix(e.def.ai); p != "" {
			out[i].Subject = all[off : off+len(p)+len(e.value)]
			off += len(p) + len(e.value)
		}
	}
	es.Elements = out
	if primary >= 0 {
		es.Primary = &out[primary]
	}
	return es
}

// esBlock lets a parsed element string and its first elements share one
// allocation.
type esBlock struct {
	es    ElementString
	elems [4]Element
}

// digitalLinkOrder appends to order the indexes of elems in Digital Link
// order: the primary key, its qualifiers (nq of them), the attributes. It
// tries the primary key's qualifier alternatives, most members present
// first, and says why none works.
func digitalLinkOrder(order []int, elems []element, primary int) ([]int, int, string) {
	pd := elems[primary].def
	var tried [4]bool
	reason := ""
	for range len(pd.qualifiers) + 1 {
		// The untried alternative with the most members present; -1 (no
		// qualifiers) last.
		best, bestN := -1, -1
		for a, alt := range pd.qualifiers {
			if tried[a] {
				continue
			}
			n := 0
			for _, q := range alt {
				if elemIndex(elems, q) >= 0 {
					n++
				}
			}
			if n > bestN {
				best, bestN = a, n
			}
		}
		if best >= 0 {
			tried[best] = true
		}
		order = append(order[:0], primary)
		var pathBuf [4]string
		path := pathBuf[:0]
		if best >= 0 {
			for _, q := range pd.qualifiers[best] {
				if i := elemIndex(elems, q); i >= 0 {
					order = append(order, i)
					path = append(path, q)
				}
			}
		}
		nq := len(order) - 1
		reason = ""
		for i, e := range elems {
			if i == primary || containsInt(order[1:nq+1], i) {
				continue
			}
			if !e.def.dlAttr {
				reason = aiName(e.def) + " cannot be written in a Digital Link URI with primary key " + aiName(pd) +
					": it is neither a key qualifier that fits the others present nor allowed as a data attribute"
				break
			}
			if belongsInPath(pd, path, e.def.ai) {
				reason = aiName(e.def) + " would have to be a key qualifier of " + aiName(pd) + " in the path, where it does not fit the others present"
				break
			}
			order = append(order, i)
		}
		if reason == "" {
			return order, nq, ""
		}
		if best < 0 {
			break
		}
	}
	return order[:0], 0, reason
}

// belongsInPath reports whether ai, inserted anywhere after the primary
// key among the path qualifiers, would still give a valid qualifier
// sequence of pd (the reference engine's test for an attribute that
// belongs in the path).
func belongsInPath(pd *aiDef, path []string, ai string) bool {
	var seqBuf [5]string
	for j := 0; j <= len(path); j++ {
		seq := append(seqBuf[:0], path[:j]...)
		seq = append(seq, ai)
		seq = append(seq, path[j:]...)
		if validQualifierSeq(pd, seq) {
			return true
		}
	}
	return false
}

// validQualifierSeq reports whether seq is, in order, a subsequence of one
// of pd's qualifier alternatives.
func validQualifierSeq(pd *aiDef, seq []string) bool {
	for _, alt := range pd.qualifiers {
		k := 0
		for _, q := range alt {
			if k < len(seq) && seq[k] == q {
				k++
			}
		}
		if k == len(seq) {
			return true
		}
	}
	return false
}

func elemIndex(elems []element, ai string) int {
	for i, e := range elems {
		if e.def.ai == ai {
			return i
		}
	}
	return -1
}

func containsInt(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// writeBracketValue writes a value of the bracketed form, escaping '('.
func writeBracketValue(b *strings.Builder, v string) {
	for i := 0; i < len(v); i++ {
		if v[i] == '(' {
			b.WriteByte('\\')
		}
		b.WriteByte(v[i])
	}
}
