package gs1

import (
	"strconv"
	"strings"
)

// Element is one GS1 element of a Digital Link: an AI, its dictionary title
// and its decoded value. Subject is set where pds has a namespace for the
// AI (01 gtin, 414 gln, 00 sscc).
type Element struct {
	AI      string `json:"ai"`
	Name    string `json:"name"`
	Value   string `json:"value"`
	Subject string `json:"subject,omitempty"`
}

// Link is a parsed Digital Link URI: the `data` member of the Digital Link
// endpoint.
type Link struct {
	URI                string    `json:"uri"`
	Stem               string    `json:"stem"` // scheme, host and any path before the key path, as written
	Primary            Element   `json:"primary"`
	Qualifiers         []Element `json:"qualifiers"` // in URI order; never nil
	Attributes         []Element `json:"attributes"` // in URI order; never nil
	IgnoredQueryParams []string  `json:"ignored_query_params"`
	ElementString      string    `json:"element_string"` // (01)09520123456788(10)ABC123
	CanonicalURI       string    `json:"canonical_uri"`  // on https://id.gs1.org, 14-digit GTIN, qualifiers in order, attributes after
	// Warnings: ZERO_SUPPRESSED_GTIN, TRAILING_SLASH, REQUISITE_AI_MISSING.
	Warnings []Warning `json:"-"`
}

// CanonicalHost is the host of canonical Digital Link URIs.
const CanonicalHost = "https://id.gs1.org"

// element is an Element with its dictionary entry, while parsing.
type element struct {
	def   *aiDef
	value string
}

func invalid(detail string) *Error { return newError(CodeInvalidIdentifier, detail) }

func aiName(d *aiDef) string { return "AI " + d.ai + " (" + d.title + ")" }

// ParseDigitalLink parses an uncompressed GS1 Digital Link URI. Errors are
// *Error with Code MALFORMED_URI, UNSUPPORTED_URI_FORM, NO_PRIMARY_IDENTIFIER
// or INVALID_IDENTIFIER, judged in that order of precedence as docs/gs1.md
// describes.
func ParseDigitalLink(uri string) (*Link, error) {
	u, err := splitURI(uri)
	if err != nil {
		return nil, err
	}
	isHTTP := strings.EqualFold(u.scheme, "http") || strings.EqualFold(u.scheme, "https")
	if isHTTP {
		if !strings.HasPrefix(uri[len(u.scheme)+1:], "//") {
			return nil, malformed("an " + strings.ToLower(u.scheme) + " URI needs //host after the scheme")
		}
		if err := checkAuthority(u.authority); err != nil {
			return nil, err
		}
	}

	// Split the raw path on '/' before any decoding. Most paths have few
	// segments; the buffer keeps them off the heap.
	var segBuf [16]string
	segs := segBuf[:0]
	if u.path != "" {
		segs = splitSegments(segs, strings.TrimPrefix(u.path, "/"))
	}
	raw := segs
	var warnings []Warning
	trailing := len(segs) > 1 && segs[len(segs)-1] == ""
	if trailing {
		segs = segs[:len(segs)-1]
	}
	if len(segs) == 1 && segs[0] == "" {
		segs = nil
	}

	// Read /AI/value pairs backwards from the end; the first primary key met
	// (the rightmost) starts the key path.
	primary := -1
	for p := len(segs) - 2; p >= 0; p -= 2 {
		d := lookupAI(segs[p])
		if d == nil {
			break
		}
		if d.dlpkey {
			primary = p
			break
		}
	}

	// An empty segment right after a primary-key AI (/01//…) is a missing
	// value. A final empty segment is a trailing slash instead when the rest
	// holds a key path (/01/<gtin>/10/01/).
	last := len(raw)
	if trailing && primary >= 0 {
		last--
	}
	for i := 0; i+1 < last; i++ {
		if raw[i+1] == "" {
			if d := lookupAI(raw[i]); d != nil && d.dlpkey {
				return nil, invalid(aiName(d) + " is followed by an empty path segment; its value is missing")
			}
		}
	}
	if !isHTTP {
		return nil, newError(CodeUnsupportedURIForm,
			"the scheme "+quote(u.scheme)+" is not supported; a GS1 Digital Link URI uses http or https")
	}
	if primary < 0 {
		return nil, noKeyPath(segs, u)
	}

	var elemBuf [8]element
	elems := elemBuf[:0]
	pd := lookupAI(segs[primary])
	pv := unescape(segs[primary+1], false)
	pv, w := zeroSuppressed(pd, pv)
	if w != nil {
		warnings = append(warnings, *w)
	}
	if msg := checkAIValue(pd, pv); msg != "" {
		return nil, invalid("the value " + quote(pv) + " of " + aiName(pd) + " " + msg)
	}
	elems = append(elems, element{pd, pv})

	// Qualifiers: optional, once each, in the order of one alternative.
	// alive holds, per qualifier alternative of the primary key, the index of
	// the last qualifier used: -1 before any, -2 once the alternative is
	// ruled out.
	var aliveBuf [4]int
	alive := aliveBuf[:0]
	for range pd.qualifiers {
		alive = append(alive, -1)
	}
	for p := primary + 2; p < len(segs); p += 2 {
		d := lookupAI(segs[p])
		v := unescape(segs[p+1], false)
		if msg := qualifierFits(pd, d, elems, alive); msg != "" {
			return nil, invalid(msg)
		}
		if msg := checkAIValue(d, v); msg != "" {
			return nil, invalid("the value " + quote(v) + " of " + aiName(d) + " " + msg)
		}
		elems = append(elems, element{d, v})
	}
	nq := len(elems) - 1

	// Query: AI data attributes; other parameters are ignored.
	ignored := []string{}
	if u.hasQuery {
		q := u.query
		for q != "" {
			param := q
			if amp := indexByte(q, '&'); amp >= 0 {
				param, q = q[:amp], q[amp+1:]
			} else {
				q = ""
			}
			if param == "" {
				continue
			}
			rawKey, rawVal, hasValue := strings.Cut(param, "=")
			// An AI is read from the name as written: a name that is not
			// plain digits, or a parameter without '=', is not GS1 data
			// and is ignored, as the reference engine does.
			if !hasValue || !isDigits(rawKey) {
				key := unescape(rawKey, true)
				if key != "" && !contains(ignored, key) {
					ignored = append(ignored, key)
				}
				if hasValue && rawKey != key && isDigits(key) && lookupAI(key) != nil {
					warnings = append(warnings, Warning{Code: WarnEncodedAI, Severity: SeverityWarn,
						Detail: "query parameter " + quote(rawKey) + " spells AI " + key + " with percent escapes; AI codes are read only as plain digits, so it was ignored"})
				}
				continue
			}
			key := rawKey
			d := lookupAI(key)
			if d == nil {
				return nil, invalid("query parameter " + quote(key) + " is all digits but no GS1 AI " + key + " exists")
			}
			if !d.dlAttr {
				return nil, invalid(aiName(d) + " is not permitted as a data attribute in the query")
			}
			for _, e := range elems {
				if e.def == d {
					return nil, invalid(aiName(d) + " appears twice")
				}
			}
			if inAliveAlternative(pd, d, alive) {
				return nil, invalid(aiName(d) + " is a key qualifier of " + aiName(pd) + " here; write it in the path (/" + pd.ai + "/…/" + d.ai + "/…), not in the query")
			}
			v := unescape(rawVal, true)
			v, w := zeroSuppressed(d, v)
			if w != nil {
				warnings = append(warnings, *w)
			}
			if msg := checkAIValue(d, v); msg != "" {
				return nil, invalid("the value " + quote(v) + " of " + aiName(d) + " " + msg)
			}
			elems = append(elems, element{d, v})
		}
	}

	if msg := exclusions(elems); msg != "" {
		return nil, invalid(msg)
	}
	if msg := digsigSerial(elems); msg != "" {
		return nil, invalid(msg)
	}
	warnings = append(warnings, requisites(elems, "URI")...)
	if trailing {
		warnings = append(warnings, Warning{Code: WarnTrailingSlash, Severity: SeverityWarn,
			Detail: "the path ends with '/'; a Digital Link URI should not"})
	}

	return buildLink(uri, uri[:stemEnd(u, segs, primary)], elems, nq, ignored, warnings), nil
}

// linkBlock lets a link and a few elements share one allocation.
type linkBlock struct {
	link  Link
	elems [4]Element
}

// buildLink assembles the answer. The element string, the canonical URI
// and the primary key's subject are cut from one buffer, and the link
// shares an allocation with its first elements, so a parse allocates little.
func buildLink(uri, stem string, elems []element, nq int, ignored []string, warnings []Warning) *Link {
	blk := new(linkBlock)
	l := &blk.link
	l.URI, l.Stem, l.IgnoredQueryParams, l.Warnings = uri, stem, ignored, warnings

	pe := elems[0]
	n := len(CanonicalHost) + len(subjectPrefix(pe.def.ai)) + len(pe.value) + escapedExtra(elems)
	for _, e := range elems {
		n += 2 * (len(e.def.ai) + len(e.value) + 2)
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
	b.WriteString(CanonicalHost)
	for i, e := range elems {
		writeCanonicalElement(&b, i, nq, e.def.ai, e.value)
	}
	cuEnd := b.Len()
	b.WriteString(subjectPrefix(pe.def.ai))
	b.WriteString(pe.value)
	all := b.String()
	l.ElementString, l.CanonicalURI = all[:esEnd], all[esEnd:cuEnd]

	l.Primary = Element{AI: pe.def.ai, Name: pe.def.title, Value: pe.value}
	if cuEnd < len(all) && subjectPrefix(pe.def.ai) != "" {
		l.Primary.Subject = all[cuEnd:]
	}
	var others []Element
	if len(elems)-1 <= len(blk.elems) {
		others = blk.elems[:len(elems)-1]
	} else {
		others = make([]Element, len(elems)-1)
	}
	for i, e := range elems[1:] {
		others[i] = Element{AI: e.def.ai, Name: e.def.title, Value: e.value}
		if p := subjectPrefix(e.def.ai); p != "" {
			others[i].Subject = p + e.value
		}
	}
	l.Qualifiers, l.Attributes = others[:nq:nq], others[nq:]
	return l
}

// subjectPrefix gives the pds namespace prefix of an AI's subject string,
// or "" where pds has no namespace for it.
func subjectPrefix(ai string) string {
	switch ai {
	case "01":
		return "gtin:"
	case "414":
		return "gln:"
	case "00":
		return "sscc:"
	}
	return ""
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// zeroSuppressed pads a GTIN written with 8, 12 or 13 digits to 14 and
// returns the warning that says so.
func zeroSuppressed(d *aiDef, v string) (string, *Warning) {
	if d.ai != "01" && d.ai != "02" {
		return v, nil
	}
	switch len(v) {
	case 8, 12, 13:
		if isDigits(v) {
			padded := zeros[:14-len(v)] + v
			return padded, &Warning{Code: WarnZeroSuppressedGTIN, Severity: SeverityWarn,
				Detail: "GTIN " + v + " of AI " + d.ai + " is written with " + strconv.Itoa(len(v)) + " digits; read as " + padded + ", write all 14"}
		}
	}
	return v, nil
}

// qualifierFits checks qualifier d after the elements so far and updates
// alive (see ParseDigitalLink); it says what is wrong, or "".
func qualifierFits(pd, d *aiDef, elems []element, alive []int) string {
	for _, e := range elems {
		if e.def == d {
			return aiName(d) + " appears twice"
		}
	}
	member := false
	fits := false
	for a, alt := range pd.qualifiers {
		idx := -1
		for i, q := range alt {
			if q == d.ai {
				idx = i
			}
		}
		if idx < 0 {
			continue
		}
		member = true
		if alive[a] != -2 && idx > alive[a] {
			fits = true
		}
	}
	if !member {
		if len(pd.qualifiers) == 0 {
			return aiName(d) + " cannot follow " + aiName(pd) + " in the path: that key takes no qualifiers (data attributes go in the query)"
		}
		return aiName(d) + " is not a key qualifier of " + aiName(pd) + " (its qualifiers are " + qualifierText(pd) + "; data attributes go in the query)"
	}
	if !fits {
		prev := elems[len(elems)-1].def.ai
		for _, alt := range pd.qualifiers {
			if indexOf(alt, d.ai) >= 0 && indexOf(alt, prev) >= 0 {
				return aiName(d) + " must come before AI " + prev + ": the qualifiers of " + aiName(pd) + " go in the order " + strings.Join(alt, ", ")
			}
		}
		return aiName(d) + " cannot be combined with AI " + prev + " after " + aiName(pd) + ": they belong to different qualifier sequences (" + qualifierText(pd) + ")"
	}
	for a, alt := range pd.qualifiers {
		idx := indexOf(alt, d.ai)
		if alive[a] == -2 || idx <= alive[a] {
			alive[a] = -2
		} else {
			alive[a] = idx
		}
	}
	return ""
}

func indexOf(ss []string, s string) int {
	for i, x := range ss {
		if x == s {
			return i
		}
	}
	return -1
}

func qualifierText(pd *aiDef) string {
	var alts []string
	for _, alt := range pd.qualifiers {
		alts = append(alts, strings.Join(alt, ", "))
	}
	return strings.Join(alts, " or ")
}

// inAliveAlternative reports whether d could still join the path's
// qualifiers: it belongs to an alternative the path is consistent with.
func inAliveAlternative(pd, d *aiDef, alive []int) bool {
	for a, alt := range pd.qualifiers {
		if alive[a] != -2 && indexOf(alt, d.ai) >= 0 {
			return true
		}
	}
	return false
}

// matchAI reports whether ai matches pattern, where 'n' stands for any digit.
func matchAI(pattern, ai string) bool {
	if len(pattern) != len(ai) {
		return false
	}
	for i := 0; i < len(ai); i++ {
		if pattern[i] != ai[i] && pattern[i] != 'n' {
			return false
		}
	}
	return true
}

// exclusions checks the ex= attributes over all elements.
func exclusions(elems []element) string {
	for _, e := range elems {
		for _, pat := range e.def.ex {
			for _, o := range elems {
				if o.def != e.def && matchAI(pat, o.def.ai) {
					return aiName(o.def) + " may not appear together with " + aiName(e.def)
				}
			}
		}
	}
	return ""
}

// digsigSerial checks the rule the reference engine always applies: a
// digital signature (AI 8030) signs a serialised key, so AIs 253, 255 and
// 8003 beside it must carry their optional serial component.
func digsigSerial(elems []element) string {
	sig := false
	for _, e := range elems {
		if e.def.ai == "8030" {
			sig = true
		}
	}
	if !sig {
		return ""
	}
	for _, e := range elems {
		switch e.def.ai {
		case "253", "255", "8003":
			if len(e.value) == minLength(e.def) {
				return aiName(e.def) + " has no serial component, but AI 8030 (DIGSIG) signs only a serialised key; add the serial part of the value"
			}
		}
	}
	return ""
}

// minLength is the shortest value of an AI: its mandatory components.
func minLength(d *aiDef) int {
	n := 0
	for _, c := range d.comps {
		if !c.optional {
			n += int(c.min)
		}
	}
	return n
}

// requisites checks the req= attributes over all elements and gives a
// warning for each one unmet.
func requisites(elems []element, where string) []Warning {
	var ws []Warning
	for _, e := range elems {
		for _, alts := range e.def.req {
			met := false
			for _, group := range alts {
				all := true
				for _, pat := range group {
					found := false
					for _, o := range elems {
						if matchAI(pat, o.def.ai) {
							found = true
							break
						}
					}
					if !found {
						all = false
						break
					}
				}
				if all {
					met = true
					break
				}
			}
			if !met {
				ws = append(ws, Warning{Code: WarnRequisiteAIMissing, Severity: SeverityWarn,
					Detail: aiName(e.def) + " is normally accompanied by " + reqText(alts) + " on the item; none is in this " + where})
			}
		}
	}
	return ws
}

func reqText(alts [][]string) string {
	var parts []string
	for _, g := range alts {
		var ais []string
		for _, p := range g {
			ais = append(ais, "AI "+p)
		}
		parts = append(parts, strings.Join(ais, " with "))
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}

// splitSegments appends the '/'-separated segments of path to segs.
func splitSegments(segs []string, path string) []string {
	for {
		i := indexByte(path, '/')
		if i < 0 {
			return append(segs, path)
		}
		segs = append(segs, path[:i])
		path = path[i+1:]
	}
}

// stemEnd gives the offset in the URI where the stem ends: before the '/'
// that starts the key path.
func stemEnd(u rawURI, segs []string, primary int) int {
	off := u.pathStart
	for i := 0; i < primary; i++ {
		off += 1 + len(segs[i])
	}
	return off
}

// Convenience alphas of Digital Link before 1.3.0, with their AIs.
var primaryAlphas = map[string]string{
	"sscc": "00", "gtin": "01", "gdti": "253", "gcn": "255", "ginc": "401", "gsin": "402",
	"gln": "414", "payto": "415", "grai": "8003", "giai": "8004", "itip": "8006",
	"cpid": "8010", "gmn": "8013", "gsrnp": "8017", "gsrn": "8018",
}

var qualifierAlphas = map[string]string{
	"cpv": "22", "lot": "10", "ser": "21", "glnx": "254", "cpsn": "8011", "srin": "8019", "refno": "8020",
}

// ConvenienceAI returns the numeric AI that a convenience alpha of Digital
// Link before 1.3.0 stands for (gtin is 01, lot is 10; any case), and
// whether it is a primary key; ok is false for any other word. The parser
// refuses these forms; a resolver that still answers printed URIs written
// with them rewrites the path with this table first.
func ConvenienceAI(alpha string) (ai string, primary, ok bool) {
	a := strings.ToLower(alpha)
	if ai, ok := primaryAlphas[a]; ok {
		return ai, true, true
	}
	ai, ok = qualifierAlphas[a]
	return ai, false, ok
}

// noKeyPath explains a path where no key path ends the URI: a convenience
// alpha or compressed form (UNSUPPORTED_URI_FORM), a valid primary key
// followed by junk (INVALID_IDENTIFIER), or nothing (NO_PRIMARY_IDENTIFIER).
func noKeyPath(segs []string, u rawURI) *Error {
	for j := 0; j+1 < len(segs); j++ {
		if ai, ok := primaryAlphas[strings.ToLower(segs[j])]; ok && segs[j+1] != "" {
			return newError(CodeUnsupportedURIForm, "convenience alpha /"+segs[j]+"/ (for AI "+ai+") was removed from GS1 Digital Link in 1.3.0; write /"+ai+"/ instead")
		}
	}
	// A primary key spelled with percent escapes (/%30%31/…) is not read as
	// an AI, as in the reference engine; say so rather than guess a form.
	for j := 0; j+1 < len(segs); j++ {
		if k := unescape(segs[j], false); k != segs[j] && isDigits(k) {
			if d := lookupAI(k); d != nil && d.dlpkey {
				return newError(CodeNoPrimaryIdentifier, "no GS1 primary key was found in the path: /"+segs[j]+"/ spells AI "+k+
					" with percent escapes, but AI codes are read only as plain digits; write /"+k+"/")
			}
		}
	}
	// The valid primary keys in the path, rightmost first.
	validKey := -1
	for j := len(segs) - 2; j >= 0; j-- {
		d := lookupAI(segs[j])
		if d == nil || !d.dlpkey {
			continue
		}
		v, _ := zeroSuppressed(d, unescape(segs[j+1], false))
		if checkAIValue(d, v) == "" {
			validKey = j
			break
		}
	}
	if n := len(segs); n > 0 && isCompressed(segs[n-1]) {
		if validKey >= 0 {
			return newError(CodeUnsupportedURIForm, "this looks like a partially compressed Digital Link URI (final segment "+quote(segs[n-1])+"); pds reads only uncompressed URIs")
		}
		detail := "this looks like a compressed Digital Link URI (final segment " + quote(segs[n-1]) + "); pds reads only uncompressed URIs"
		if isDigits(segs[n-1]) {
			detail += "; if it is a bare key, write its AI before it, e.g. /01/ for a GTIN"
		}
		return newError(CodeUnsupportedURIForm, detail)
	}
	if validKey >= 0 {
		d := lookupAI(segs[validKey])
		if validKey+2 < len(segs) {
			if ai, ok := qualifierAlphas[strings.ToLower(segs[validKey+2])]; ok {
				return newError(CodeUnsupportedURIForm, "convenience alpha /"+segs[validKey+2]+"/ (for AI "+ai+") was removed from GS1 Digital Link in 1.3.0; write /"+ai+"/ instead")
			}
		}
		return invalid("the key path /" + segs[validKey] + "/" + segs[validKey+1] + " of " + aiName(d) +
			" is followed by " + quote("/"+strings.Join(segs[validKey+2:], "/")) + ", which is not a sequence of /AI/value key qualifiers")
	}
	detail := "no GS1 primary key (such as /01/ for a GTIN, /414/ for a GLN, /00/ for an SSCC) followed by its value was found in the path"
	for _, param := range strings.Split(u.query, "&") {
		key, _, _ := strings.Cut(param, "=")
		if d := lookupAI(key); d != nil && d.dlpkey {
			detail += "; " + aiName(d) + " in the query is a data attribute, not a key path"
			break
		}
	}
	return newError(CodeNoPrimaryIdentifier, detail)
}

// isCompressed reports whether seg looks like a compressed Digital Link
// payload: 10 or more base64url characters.
func isCompressed(seg string) bool {
	if len(seg) < 10 {
		return false
	}
	for i := 0; i < len(seg); i++ {
		if c := seg[i]; c >= 128 || !cset64[c] {
			return false
		}
	}
	return true
}

// writeCanonicalElement writes the k-th AI of a canonical Digital Link: the
// primary key and its nq qualifiers as path segments (/ai/value), the rest
// as query parameters (?ai=value, then &ai=value).
func writeCanonicalElement(b *strings.Builder, k, nq int, ai, value string) {
	switch {
	case k <= nq:
		b.WriteByte('/')
	case k == nq+1:
		b.WriteByte('?')
	default:
		b.WriteByte('&')
	}
	b.WriteString(ai)
	if k <= nq {
		b.WriteByte('/')
	} else {
		b.WriteByte('=')
	}
	writeEscaped(b, value)
}
