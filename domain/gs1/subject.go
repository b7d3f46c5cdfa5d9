package gs1

import "strings"

// Subject is a namespace-qualified identifier in canonical form: a GTIN is
// 14 digits, a GLN 13, an SSCC 18, an internal SKU as written.
type Subject struct {
	Namespace string
	Value     string
}

// String gives the subject string, e.g. "gtin:09520123456788".
func (s Subject) String() string { return s.Namespace + ":" + s.Value }

// ParseSubject reads a subject string ("gtin:9520123456788") and returns it
// canonical (the GTIN zero-padded to 14 digits). An unknown namespace, a
// value of the wrong shape or a wrong check digit is an *Error with Code
// INVALID_IDENTIFIER.
func ParseSubject(s string) (Subject, error) {
	i := strings.IndexByte(s, ':')
	if i < 0 {
		return Subject{}, newError(CodeInvalidIdentifier,
			quote(s)+" is not a subject string; write namespace:value, e.g. gtin:09520123456788")
	}
	ns, value := s[:i], s[i+1:]
	var v verdict
	switch ns {
	case NSGTIN:
		if c, ok := ValidGTIN(value); ok {
			return Subject{Namespace: NSGTIN, Value: string(c[:])}, nil
		}
		v = judgeGTIN(value)
	case NSGLN:
		v = judgeGLN(value)
	case NSSSCC:
		v = judgeSSCC(value)
	case NSInternalSKU:
		v = judgeSKU(value)
	default:
		return Subject{}, newError(CodeInvalidIdentifier,
			"unknown namespace "+quote(ns)+" in "+quote(s)+"; use gtin, gln, sscc or internal_sku")
	}
	if !v.valid {
		return Subject{}, invalidIdentifier(s, ns, v)
	}
	return Subject{Namespace: ns, Value: v.normalized}, nil
}

func invalidIdentifier(input, ns string, v verdict) *Error {
	detail := quote(input) + " is not a valid " + ns + " identifier"
	if len(v.warnings) > 0 && v.warnings[0].Detail != "" {
		detail += ": " + v.warnings[0].Detail
	}
	return newError(CodeInvalidIdentifier, detail)
}

// CanonicalGTIN reports whether s is a GTIN subject string already in
// canonical form ("gtin:" and 14 digits with the right check digit) and
// returns its subject, whose Value is s's own bytes. Interpret reads such
// an s as that one subject with no warnings; a caller reading many
// identifiers skips the rest of Interpret, and its allocations, with it.
func CanonicalGTIN(s string) (Subject, bool) {
	const prefix = NSGTIN + ":"
	if len(s) != len(prefix)+14 || s[:len(prefix)] != prefix {
		return Subject{}, false
	}
	if _, ok := ValidGTIN(s[len(prefix):]); !ok {
		return Subject{}, false
	}
	return Subject{Namespace: NSGTIN, Value: s[len(prefix):]}, true
}

// ValidGTIN is the allocation-free fast path for the common case: it
// reports whether value is a valid GTIN-8, -12, -13 or -14 (ASCII digits,
// right mod-10 check digit) and returns it zero-padded to 14 digits. It
// gives no advisories; use Validate for those.
func ValidGTIN(value string) (canonical14 [14]byte, ok bool) {
	n := len(value)
	if n != 8 && n != 12 && n != 13 && n != 14 {
		return canonical14, false
	}
	pad := 14 - n
	for i := 0; i < pad; i++ {
		canonical14[i] = '0'
	}
	// Weights from the check digit leftwards: check digit 1, then 3,1,3…
	// In the 14-digit form, even positions (0-based) weigh 3, odd ones 1.
	sum := 0
	for i := 0; i < n; i++ {
		c := value[i]
		d := int(c) - '0'
		if uint(d) > 9 {
			return canonical14, false
		}
		canonical14[pad+i] = c
		if (pad+i)&1 == 0 {
			sum += 3 * d
		} else {
			sum += d
		}
	}
	return canonical14, sum%10 == 0
}
