package gs1

// CheckDigit computes the GS1 mod-10 check digit for a body of ASCII digits
// (everything left of the check digit). Weights 3,1,3,1… run from the digit
// nearest the check digit leftwards, so left zero-padding never changes it.
// ok is false when body is empty or holds a byte outside '0'-'9'.
func CheckDigit(body string) (digit byte, ok bool) {
	if len(body) == 0 {
		return 0, false
	}
	sum := 0
	weight := 3
	for i := len(body) - 1; i >= 0; i-- {
		c := body[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		sum += int(c-'0') * weight
		weight = 4 - weight
	}
	return byte('0' + (10-sum%10)%10), true
}

// ValidCheckDigit reports whether the last digit of s is the mod-10 check
// digit of the rest. s must be at least two ASCII digits.
func ValidCheckDigit(s string) bool {
	if len(s) < 2 {
		return false
	}
	d, ok := CheckDigit(s[:len(s)-1])
	return ok && d == s[len(s)-1]
}
