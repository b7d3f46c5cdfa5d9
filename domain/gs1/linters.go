package gs1

import "strconv"

// Linters from the Barcode Syntax Dictionary that pds does not apply, with
// the reason. Empty: pds applies every linter of the 2026-01-27 dictionary.
// TestEveryLinterAccountedFor fails when a new release names one pds
// neither applies nor lists here.
var unappliedLinters = map[string]string{}

// lint applies the named linter to one component s (already of the right
// length and character set) and says what is wrong, or "". A linter pds
// does not apply passes everything.
func lint(name, s string) string {
	msg, _ := lintKnown(name, s)
	return msg
}

// lintKnown is lint that also reports whether pds applies the linter.
func lintKnown(name, s string) (msg string, known bool) {
	known = true
	switch name {
	case "csum":
		msg = lintCsum(s)
	case "csumalpha":
		msg = lintCsumAlpha(s)
	case "yymmdd":
		msg = lintDate(s, false)
	case "yymmd0":
		msg = lintDate(s, true)
	case "yyyymmdd":
		msg = lintDate8(s)
	case "hhmi":
		if len(s) != 4 || num(s[:2]) > 23 || num(s[2:]) > 59 {
			msg = "is not a time HHMI (hours 00-23, minutes 00-59)"
		}
	case "hh":
		if num(s) > 23 {
			msg = "is not an hour 00-23"
		}
	case "mi":
		if num(s) > 59 {
			msg = "is not a minute 00-59"
		}
	case "ss":
		if num(s) > 59 {
			msg = "is not a second 00-59"
		}
	case "iso3166":
		if !iso3166(s) {
			msg = "is not an ISO 3166-1 numeric country code"
		}
	case "iso3166999":
		if s != "999" && !iso3166(s) {
			msg = "is not an ISO 3166-1 numeric country code or 999"
		}
	case "iso3166alpha2":
		if !iso3166Alpha2(s) {
			msg = "is not an ISO 3166-1 alpha-2 country code"
		}
	case "iso4217":
		if !iso4217(s) {
			msg = "is not an ISO 4217 numeric currency code"
		}
	case "pieceoftotal":
		h := len(s) / 2
		p, t := num(s[:h]), num(s[h:])
		if p < 1 || t < 1 || p > t {
			msg = "is not a piece number of a total (piece 01 up to the total, total at least 01)"
		}
	case "nozeroprefix":
		// As the reference engine reads it: no leading zero, so "0" alone
		// is refused too.
		if len(s) > 0 && s[0] == '0' {
			msg = "starts with 0; a CPID serial has no leading zero (0 alone included)"
		}
	case "gcppos1":
		msg = lintGCP(s, 0)
	case "gcppos2":
		msg = lintGCP(s, 1)
	case "mediatype":
		if len(s) != 2 || !isDigits(s) || !mediaType(num(s)) {
			msg = "is not an AIDC media type (01-10, or 80-99 for national use)"
		}
	case "packagetype":
		if !packageType(s) {
			msg = "is not a package type code of the GS1 PackageTypeCode list (UN/ECE Recommendation 21 codes and GS1's own)"
		}
	case "couponcode":
		msg = lintCouponCode(s)
	case "couponposoffer":
		msg = lintCouponPOSOffer(s)
	case "importeridx":
		if len(s) != 1 || !importerIndexChar(s[0]) {
			msg = "is not an importer index (0-9, A-Z, a-z, - or _)"
		}
	case "zero":
		if !allZeros(s) {
			msg = "must be 0"
		}
	case "nonzero":
		if allZeros(s) {
			msg = "must not be zero"
		}
	case "yesno":
		if s != "0" && s != "1" {
			msg = "must be 0 (no) or 1 (yes)"
		}
	case "hyphen":
		for i := 0; i < len(s); i++ {
			if s[i] != '-' {
				msg = "must be a hyphen"
			}
		}
	case "winding":
		if s != "0" && s != "1" && s != "9" {
			msg = "is not a winding direction (0, 1 or 9)"
		}
	case "iso5218":
		if s != "0" && s != "1" && s != "2" && s != "9" {
			msg = "is not an ISO/IEC 5218 sex code (0, 1, 2 or 9)"
		}
	case "latitude":
		if v, err := strconv.ParseUint(s, 10, 64); err != nil || v > 1800000000 {
			msg = "is not a latitude (0 to 1800000000)"
		}
	case "longitude":
		if v, err := strconv.ParseUint(s, 10, 64); err != nil || v > 3600000000 {
			msg = "is not a longitude (0 to 3600000000)"
		}
	case "hasnondigit":
		if isDigits(s) {
			msg = "must hold at least one character that is not a digit"
		}
	case "pcenc":
		for i := 0; i < len(s); i++ {
			if s[i] == '%' && (i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2])) {
				msg = "has a % that does not start a %XX escape"
			}
		}
	case "posinseqslash":
		msg = lintPosInSeq(s)
	case "iban":
		msg = lintIBAN(s)
	default:
		known = false
	}
	return msg, known
}

// importerIndexChar reports whether c may be an importer index: '-', '_',
// an ASCII digit or an ASCII letter.
func importerIndexChar(c byte) bool {
	return c == '-' || c == '_' || c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z'
}

// num reads up to 9 ASCII digits; callers have checked the character set.
func num(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'A' && c <= 'F' || c >= 'a' && c <= 'f'
}

func lintCsum(s string) string {
	if len(s) < 2 {
		return "is too short to carry a check digit"
	}
	want, ok := CheckDigit(s[:len(s)-1])
	if !ok {
		return "is not all digits"
	}
	if got := s[len(s)-1]; got != want {
		return "has check digit " + string(rune(got)) + "; it should be " + string(rune(want))
	}
	return ""
}

func lintCsumAlpha(s string) string {
	if len(s) < 3 {
		return "is too short to carry its two check characters"
	}
	want, ok := CheckPairAlpha(s[:len(s)-2])
	if !ok {
		return "holds characters the check cannot weigh"
	}
	if s[len(s)-2] != want[0] || s[len(s)-1] != want[1] {
		return "has check characters " + s[len(s)-2:] + "; they should be " + string(want[:])
	}
	return ""
}

func daysIn(month int, leap bool) int {
	switch month {
	case 2:
		if leap {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// lintDate checks YYMMDD. Two-digit years are leap when divisible by 4,
// which is right for every year from 1901 to 2099. With dayZero, day 00
// (meaning the end of the month) is allowed.
func lintDate(s string, dayZero bool) string {
	if len(s) != 6 {
		return "is not a date YYMMDD"
	}
	yy, mm, dd := num(s[:2]), num(s[2:4]), num(s[4:])
	if mm < 1 || mm > 12 {
		return "is not a date YYMMDD: month " + s[2:4] + " does not exist"
	}
	if dd == 0 && dayZero {
		return ""
	}
	if dd < 1 || dd > daysIn(mm, yy%4 == 0) {
		return "is not a date YYMMDD: day " + s[4:] + " does not exist in month " + s[2:4]
	}
	return ""
}

func lintDate8(s string) string {
	if len(s) != 8 {
		return "is not a date YYYYMMDD"
	}
	y, mm, dd := num(s[:4]), num(s[4:6]), num(s[6:])
	if mm < 1 || mm > 12 {
		return "is not a date YYYYMMDD: month " + s[4:6] + " does not exist"
	}
	leap := y%4 == 0 && (y%100 != 0 || y%400 == 0)
	if dd < 1 || dd > daysIn(mm, leap) {
		return "is not a date YYYYMMDD: day " + s[6:] + " does not exist in month " + s[4:6]
	}
	return ""
}

// lintPosInSeq checks "position/total", e.g. "1/2".
func lintPosInSeq(s string) string {
	const msg = "is not a position in a sequence written p/t (1 <= p <= t)"
	slash := -1
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			slash = i
			break
		}
	}
	if slash <= 0 || slash == len(s)-1 {
		return msg
	}
	p, t := s[:slash], s[slash+1:]
	if !isDigits(p) || !isDigits(t) || p[0] == '0' || t[0] == '0' || num(p) > num(t) {
		return msg
	}
	return ""
}

// lintIBAN checks an IBAN as the reference engine does: an ISO 3166-1
// alpha-2 country code, 11 to 34 characters of 0-9 and A-Z, and the mod-97
// check.
func lintIBAN(s string) string {
	const msg = "is not an IBAN (ISO 3166 country code, check digits, 11 to 34 letters A-Z or digits, mod-97 check)"
	if len(s) < 11 || len(s) > 34 || !iso3166Alpha2(s[:2]) {
		return msg
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z') {
			return msg
		}
	}
	rem := 0
	for i := 0; i < len(s); i++ {
		c := s[(i+4)%len(s)]
		if c >= 'A' {
			rem = (rem*100 + int(c-'A'+10)) % 97
		} else {
			rem = (rem*10 + int(c-'0')) % 97
		}
	}
	if rem != 1 {
		return "fails the IBAN mod-97 check"
	}
	return ""
}
