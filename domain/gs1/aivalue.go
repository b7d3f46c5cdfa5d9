package gs1

import (
	"strconv"
	"unicode/utf8"
)

// checkAIValue reports what is wrong with value as the data of AI d (its
// format components, character sets and linters), or "" when it is fine.
// The message names no AI; callers prefix it.
func checkAIValue(d *aiDef, value string) string {
	pos := 0
	for i := range d.comps {
		c := &d.comps[i]
		rest := len(value) - pos
		if rest == 0 {
			if c.optional {
				break
			}
			if pos == 0 {
				return "is empty; " + formatText(d)
			}
			return "is too short; " + formatText(d)
		}
		n := int(c.max)
		if rest < n {
			if c.min == c.max {
				return "is too short; " + formatText(d)
			}
			n = rest
		}
		part := value[pos : pos+n]
		if msg := checkCSet(c.cset, part); msg != "" {
			return msg
		}
		for _, name := range c.linters {
			if msg := lint(name, part); msg != "" {
				if len(d.comps) > 1 {
					return "component " + strconv.Quote(part) + " " + msg
				}
				return msg
			}
		}
		pos += n
	}
	if pos < len(value) {
		return "is too long (" + strconv.Itoa(utf8.RuneCountInString(value)) + " characters); " + formatText(d)
	}
	return ""
}

// formatText describes an AI's format in words, e.g. "14 digits" or
// "1 to 20 characters of GS1 CSET 82".
func formatText(d *aiDef) string {
	s := "expected "
	for i := range d.comps {
		c := &d.comps[i]
		if i > 0 {
			s += ", then "
		}
		if c.optional {
			s += "optionally "
		}
		if c.min == c.max {
			s += strconv.Itoa(int(c.max))
		} else {
			s += strconv.Itoa(int(c.min)) + " to " + strconv.Itoa(int(c.max))
		}
		s += " " + csetName(c.cset, c.max == 1)
	}
	return s
}

func csetName(cset byte, one bool) string {
	switch cset {
	case 'N':
		if one {
			return "digit"
		}
		return "digits"
	case 'Y':
		return "characters of GS1 CSET 39 (# - / 0-9 A-Z)"
	case 'Z':
		return "characters of base64url"
	}
	return "characters of GS1 CSET 82"
}

// Character sets, as 128-entry tables indexed by ASCII byte.
var (
	cset82 [128]bool
	cset39 [128]bool
	cset64 [128]bool
)

// cset82Chars lists GS1 CSET 82 in ASCII order; a character's index here is
// its value in the csumalpha check.
const cset82Chars = "!\"%&'()*+,-./0123456789:;<=>?ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz"

// cset82Index maps an ASCII byte to its CSET 82 index, or -1.
var cset82Index [128]int8

func init() {
	for i := range cset82Index {
		cset82Index[i] = -1
	}
	for i := 0; i < len(cset82Chars); i++ {
		cset82[cset82Chars[i]] = true
		cset82Index[cset82Chars[i]] = int8(i)
	}
	for _, c := range []byte("#-/0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ") {
		cset39[c] = true
	}
	for _, c := range []byte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") {
		cset64[c] = true
	}
}

// checkCSet reports the first character of s outside the component's set.
func checkCSet(cset byte, s string) string {
	if cset == 'Z' {
		if msg := checkPadding(s); msg != "" {
			return msg
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := false
		switch cset {
		case 'N':
			ok = c >= '0' && c <= '9'
		case 'X':
			ok = c < 128 && cset82[c]
		case 'Y':
			ok = c < 128 && cset39[c]
		case 'Z':
			// base64url, with '=' padding only at the end (checkPadding).
			ok = c < 128 && cset64[c] || c == '=' && onlyPadding(s[i:])
		}
		if !ok {
			return "has " + describeByte(s, i) + ", which is not allowed; " + csetRule(cset)
		}
	}
	return ""
}

// checkPadding applies the reference engine's rule for '=' padding of a
// base64url component (AI 8030): at most two '=' at the end, and a padded
// value is a multiple of three characters long.
func checkPadding(s string) string {
	pads := 0
	for pads < len(s) && s[len(s)-1-pads] == '=' {
		pads++
	}
	if pads > 2 || pads > 0 && len(s)%3 != 0 {
		return "has wrong base64url padding: at most two '=' at the end, and a padded value is a multiple of 3 characters long"
	}
	return ""
}

func onlyPadding(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '=' {
			return false
		}
	}
	return len(s) <= 2
}

func csetRule(cset byte) string {
	switch cset {
	case 'N':
		return "only digits 0-9 are allowed"
	case 'Y':
		return "only # - / 0-9 A-Z are allowed (GS1 CSET 39)"
	case 'Z':
		return "only base64url characters are allowed"
	}
	return "only GS1 CSET 82 characters are allowed (A-Z a-z 0-9 and ! \" % & ' ( ) * + , - . / : ; < = > ? _)"
}

// describeByte names the character starting at s[i] for a message.
func describeByte(s string, i int) string {
	r, size := utf8.DecodeRuneInString(s[i:])
	if r == utf8.RuneError && size <= 1 {
		return "byte 0x" + strconv.FormatUint(uint64(s[i]), 16)
	}
	if r < 0x20 || r == 0x7f || r >= 0x80 {
		return unicodeName(r)
	}
	return strconv.QuoteRune(r)
}
