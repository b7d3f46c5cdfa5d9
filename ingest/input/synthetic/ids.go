package synthetic

import (
	"errors"

	"github.com/productdata/pds/domain/gs1"
)

// Identifier spaces. Every generated GTIN comes from a company prefix that
// one maker alone holds, and every company prefix within one three-digit
// (GTIN-13) or two-digit (UPC) block has the same length, so no prefix is a
// prefix of another and item references within a prefix are handed out once:
// identifiers are unique by construction. The showcase products use the GS1
// demo prefix 952 and the UPC lead 01, which the generator never uses.

var errExhausted = errors.New("synthetic: identifier space exhausted")

// perm spreads a counter over a power-of-ten range: k -> (k*mul + off) mod
// capacity is a permutation of [0, capacity) when mul is prime to 10. Each
// block and each company prefix has its own mul and off, drawn from the seed,
// so numbers look scattered rather than counted.
type perm struct{ mul, off, capacity int }

func newPerm(seed int64, key string, capacity int) perm {
	h := fnv64(key) ^ uint64(seed)*0x9e3779b97f4a7c15
	h = splitmix(h)
	mul := int(h%uint64(capacity)) | 1
	if mul%5 == 0 {
		mul += 2
	}
	return perm{mul: mul, off: int((h >> 24) % uint64(capacity)), capacity: capacity}
}

func (p perm) at(k int) int { return (k*p.mul + p.off) % p.capacity }

func fnv64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

func pow10(d int) int {
	n := 1
	for ; d > 0; d-- {
		n *= 10
	}
	return n
}

// appendPadded appends n in exactly width digits.
func appendPadded(b []byte, n, width int) []byte {
	for i := width - 1; i >= 0; i-- {
		b = append(b, '0')
	}
	for i := len(b) - 1; n > 0; i-- {
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return b
}

// withCheck appends the GS1 check digit of body to it.
func withCheck(body []byte) []byte {
	d, ok := gs1.CheckDigit(string(body))
	if !ok {
		panic("synthetic: check digit of " + string(body))
	}
	return append(body, d)
}

// allocator hands out company prefixes per block and GTIN-8 item numbers.
type allocator struct {
	seed  int64
	next  map[string]int  // block key -> how many were handed out (lookup only)
	perms map[string]perm // block key -> its permutation (lookup only)
}

func newAllocator(seed int64) *allocator {
	return &allocator{seed: seed, next: map[string]int{}, perms: map[string]perm{}}
}

// take returns the next value of key's d-digit space, never zero; ok is
// false when the space is used up.
func (a *allocator) take(key string, d int) (int, bool) {
	p, ok := a.perms[key]
	if !ok {
		p = newPerm(a.seed, key, pow10(d))
		a.perms[key] = p
	}
	for {
		k := a.next[key]
		if k >= p.capacity {
			return 0, false
		}
		a.next[key] = k + 1
		if v := p.at(k); v != 0 {
			return v, true
		}
	}
}

// companyPrefix gives a maker a new company prefix from its country.
func (a *allocator) companyPrefix(m *maker) error {
	c := &countries[m.country]
	blocks, digits := c.small, 6 // GTIN-13: 3 + 6 = 9-digit prefix, 3-digit items
	if c.upc {
		digits = 6 // UPC: 2 + 6 = 8-digit prefix, 3-digit items
	}
	if m.big && len(c.big) > 0 {
		blocks, digits = c.big, 4 // 7-digit (GTIN-13) or 6-digit (UPC) prefix, 5-digit items
	}
	// Start at a block picked by how many prefixes the country gave out, so
	// makers spread over the country's blocks.
	kind := "13:"
	if c.upc {
		kind = "12:"
	}
	start := a.next["country:"+c.code]
	a.next["country:"+c.code] = start + 1
	for i := 0; i < len(blocks); i++ {
		block := blocks[(start+i)%len(blocks)]
		n, ok := a.take(kind+block, digits)
		if !ok {
			continue
		}
		p := appendPadded([]byte(block), n, digits)
		m.prefix = string(p)
		m.used = 0
		bodyLen := 12 // GTIN-13 body
		if c.upc {
			bodyLen = 11
		}
		m.items = newPerm(a.seed, m.prefix, pow10(bodyLen-len(m.prefix)))
		return nil
	}
	return errExhausted
}

// itemBody returns a fresh 12-digit GTIN-13 body (for UPC makers the UPC
// body with a leading zero) from m's prefix, taking a new prefix when it is
// full.
func (a *allocator) itemBody(m *maker, buf []byte) ([]byte, error) {
	item := 0
	for item == 0 {
		if m.used >= m.items.capacity {
			if err := a.companyPrefix(m); err != nil {
				return nil, err
			}
		}
		item = m.items.at(m.used)
		m.used++
	}
	buf = buf[:0]
	if countries[m.country].upc {
		buf = append(buf, '0')
	}
	buf = append(buf, m.prefix...)
	return appendPadded(buf, item, 12-len(buf)), nil
}

// gtin8 returns a fresh GTIN-8 of m's country (8 digits), or ok false when
// the country has none left.
func (a *allocator) gtin8(m *maker) (string, bool) {
	c := &countries[m.country]
	if len(c.gtin8) == 0 {
		return "", false
	}
	start := a.next["g8country:"+c.code]
	a.next["g8country:"+c.code] = start + 1
	for i := 0; i < len(c.gtin8); i++ {
		block := c.gtin8[(start+i)%len(c.gtin8)]
		n, ok := a.take("8:"+block, 4)
		if !ok {
			continue
		}
		return string(withCheck(appendPadded([]byte(block), n, 4))), true
	}
	return "", false
}

// makerGLN is the GLN of a maker's head office: its first company prefix,
// zeros, check digit.
func makerGLN(m *maker) string {
	b := []byte{}
	if countries[m.country].upc {
		b = append(b, '0')
	}
	b = append(b, m.prefix...)
	for len(b) < 12 {
		b = append(b, '0')
	}
	return string(withCheck(b))
}
