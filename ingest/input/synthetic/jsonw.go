package synthetic

import (
	"strconv"
	"unicode/utf8"
)

// The bulk files (products, claims, documents, evidence, verdicts) are written
// with the append helpers below instead of encoding/json, for speed. Each
// line they produce is byte for byte what json.Marshal gives for the same
// domain value (HTML-safe escaping included); a test decodes every line into
// its domain type, marshals it again and compares.

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string, escaped exactly as encoding/json
// escapes it: ", \ and control characters, <, > and & as \u escapes, U+2028
// and U+2029, invalid UTF-8 as U+FFFD.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendNullString appends s as a JSON string, or null when s is empty.
func appendNullString(b []byte, s string) []byte {
	if s == "" {
		return append(b, "null"...)
	}
	return appendString(b, s)
}

// appendFloat appends f as encoding/json does for values in [1e-6, 1e21)
// and zero, which are the only ones the generator makes.
func appendFloat(b []byte, f float64) []byte {
	return strconv.AppendFloat(b, f, 'f', -1, 64)
}

// appendHundredths appends n/100 as a JSON number (1.5 for 150, 2 for 200).
func appendHundredths(b []byte, n int) []byte {
	return appendFloat(b, float64(n)/100)
}

// appendTime appends the Unix time sec as a quoted RFC 3339 UTC date-time,
// "2025-03-04T05:06:07Z". sec must be after 1970.
func appendTime(b []byte, sec int64) []byte {
	days := sec / 86400
	rem := sec % 86400
	y, m, d := civil(days)
	b = append(b, '"')
	b = append(b, byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-')
	b = append(b, byte('0'+m/10), byte('0'+m%10), '-', byte('0'+d/10), byte('0'+d%10), 'T')
	h, mi, s := rem/3600, rem/60%60, rem%60
	b = append(b, byte('0'+h/10), byte('0'+h%10), ':', byte('0'+mi/10), byte('0'+mi%10), ':')
	b = append(b, byte('0'+s/10), byte('0'+s%10), 'Z', '"')
	return b
}

// civil converts days since 1970-01-01 to a proleptic Gregorian date
// (Howard Hinnant's days-to-civil algorithm).
func civil(days int64) (year, month, day int64) {
	z := days + 719468
	era := z / 146097
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y := yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d := doy - (153*mp+2)/5 + 1
	m := mp + 3
	if m > 12 {
		m -= 12
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

// formatTime is appendTime as a string, without the quotes.
func formatTime(sec int64) string {
	b := appendTime(make([]byte, 0, 24), sec)
	return string(b[1 : len(b)-1])
}
