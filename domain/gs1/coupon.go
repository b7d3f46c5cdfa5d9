package gs1

import "strconv"

// The coupon linters read the North American coupon codes of AIs 8110 and
// 8112 (GS1 US / NACAG): all digits, a sequence of fields, some of them
// sized by a one-digit variable length indicator (VLI) in front.

// couponReader walks a coupon code field by field; the first problem met is
// kept in err and every later step does nothing.
type couponReader struct {
	s   string
	pos int
	err string
}

// fail records the first problem, naming the field and where it starts.
func (r *couponReader) fail(field, problem string) {
	if r.err == "" {
		r.err = "is not a valid coupon code: " + field + " (at position " + strconv.Itoa(r.pos+1) + ") " + problem
	}
}

func (r *couponReader) more() bool { return r.err == "" && r.pos < len(r.s) }

// digit takes one digit that allowed accepts.
func (r *couponReader) digit(field string, allowed func(d int) bool) int {
	if r.err != "" {
		return -1
	}
	if r.pos >= len(r.s) {
		r.fail(field, "is missing")
		return -1
	}
	d := int(r.s[r.pos] - '0')
	if !allowed(d) {
		r.fail(field, "may not be "+r.s[r.pos:r.pos+1])
		return -1
	}
	r.pos++
	return d
}

// field takes n digits.
func (r *couponReader) field(name string, n int) string {
	if r.err != "" {
		return ""
	}
	if len(r.s)-r.pos < n {
		r.fail(name, "needs "+strconv.Itoa(n)+" digits, only "+strconv.Itoa(len(r.s)-r.pos)+" are left")
		return ""
	}
	f := r.s[r.pos : r.pos+n]
	r.pos += n
	return f
}

// gcp takes a company prefix of n digits, which must pass gcppos1.
func (r *couponReader) gcp(name string, n int) {
	if f := r.field(name, n); r.err == "" {
		if msg := lintGCP(f, 0); msg != "" {
			r.fail(name, msg)
		}
	}
}

func anyDigit(int) bool         { return true }
func upTo(n int) func(int) bool { return func(d int) bool { return d <= n } }
func between(lo, hi int) func(int) bool {
	return func(d int) bool { return d >= lo && d <= hi }
}
func requirementCode(d int) bool { return d <= 4 || d == 9 }
func gcpVLI(d int) bool          { return d <= 6 || d == 9 }

// purchase reads a purchase requirement: its VLI (1-5) and value, its code
// (0-4 or 9) and a three-digit family code.
func (r *couponReader) purchase(nth string) {
	n := r.digit(nth+" purchase requirement length", between(1, 5))
	r.field(nth+" purchase requirement", n)
	r.digit(nth+" purchase requirement code", requirementCode)
	r.field(nth+" purchase family code", 3)
}

// optionalGCP reads a company prefix VLI (0-6 for 6 to 12 digits, 9 for
// none) and the prefix.
func (r *couponReader) optionalGCP(name string) {
	if v := r.digit(name+" length", gcpVLI); v >= 0 && v != 9 {
		r.gcp(name, v+6)
	}
}

func (r *couponReader) date(name string) string {
	d := r.field(name, 6)
	if r.err == "" {
		if msg := lintDate(d, false); msg != "" {
			r.pos -= 6
			r.fail(name, msg)
		}
	}
	return d
}

func (r *couponReader) allDigits() {
	for i := 0; i < len(r.s); i++ {
		if r.s[i] < '0' || r.s[i] > '9' {
			r.pos = i
			r.fail("every character", "must be a digit")
			return
		}
	}
}

// lintCouponCode checks AI 8110: company prefix, offer code, save value,
// primary purchase, then the optional fields 1, 2, 3, 4, 5, 6 and 9, each
// at most once and in that order, and nothing after them.
func lintCouponCode(s string) string {
	r := &couponReader{s: s}
	r.allDigits()
	if v := r.digit("company prefix length", upTo(6)); v >= 0 {
		r.gcp("company prefix", v+6)
	}
	r.field("offer code", 6)
	n := r.digit("save value length", between(1, 5))
	r.field("save value", n)
	r.purchase("first")
	if r.more() && s[r.pos] == '1' {
		r.pos++
		r.digit("additional purchase rules code", upTo(3))
		r.purchase("second")
		r.optionalGCP("second purchase company prefix")
	}
	if r.more() && s[r.pos] == '2' {
		r.pos++
		r.purchase("third")
		r.optionalGCP("third purchase company prefix")
	}
	expiry := ""
	if r.more() && s[r.pos] == '3' {
		r.pos++
		expiry = r.date("expiration date")
	}
	if r.more() && s[r.pos] == '4' {
		r.pos++
		start := r.date("start date")
		if r.err == "" && expiry != "" && start > expiry {
			r.pos -= 6
			r.fail("start date", "is after the expiration date "+expiry)
		}
	}
	if r.more() && s[r.pos] == '5' {
		r.pos++
		n := r.digit("serial number length", anyDigit)
		r.field("serial number", n+6)
	}
	if r.more() && s[r.pos] == '6' {
		r.pos++
		if v := r.digit("retailer company prefix or GLN length", between(1, 7)); v >= 0 {
			r.gcp("retailer company prefix or GLN", v+6)
		}
	}
	if r.more() && s[r.pos] == '9' {
		r.pos++
		r.digit("save value code", func(d int) bool { return d <= 2 || d == 5 || d == 6 })
		r.digit("save value applies to item", upTo(2))
		r.digit("store coupon flag", anyDigit)
		r.digit("don't multiply flag", upTo(1))
	}
	if r.more() {
		r.fail("the data", "is left over after the last field (optional fields are 1, 2, 3, 4, 5, 6 and 9, in that order)")
	}
	return r.err
}

// lintCouponPOSOffer checks AI 8112: format code (0 or 1), funder ID with
// its VLI, offer code, serial number with its VLI, and nothing after.
func lintCouponPOSOffer(s string) string {
	r := &couponReader{s: s}
	r.allDigits()
	r.digit("format code", upTo(1))
	n := r.digit("funder ID length", upTo(6))
	r.field("funder ID", n+6)
	r.field("offer code", 6)
	n = r.digit("serial number length", anyDigit)
	r.field("serial number", n+6)
	if r.more() {
		r.fail("the data", "is left over after the serial number")
	}
	return r.err
}
