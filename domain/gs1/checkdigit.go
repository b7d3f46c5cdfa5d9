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

// csumAlphaSet is the alphabet of the two check characters of AI 8013.
const csumAlphaSet = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ"

// primes holds the first 100 primes, the weights of the csumalpha check.
var primes = func() []int {
	var ps []int
	for n := 2; len(ps) < 100; n++ {
		prime := true
		for _, p := range ps {
			if p*p > n {
				break
			}
			if n%p == 0 {
				prime = false
				break
			}
		}
		if prime {
			ps = append(ps, n)
		}
	}
	return ps
}()

// CheckPairAlpha computes the two check characters of a GS1 alphanumeric
// key (the GMN, AI 8013) for body, the characters before them. ok is false
// when body is empty, too long or holds a character outside GS1 CSET 82.
func CheckPairAlpha(body string) (pair [2]byte, ok bool) {
	if body == "" || len(body) > len(primes) {
		return pair, false
	}
	sum := 0
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c >= 128 || cset82Index[c] < 0 {
			return pair, false
		}
		sum += int(cset82Index[c]) * primes[len(body)-1-i]
	}
	sum %= 1021
	return [2]byte{csumAlphaSet[sum>>5], csumAlphaSet[sum&31]}, true
}
