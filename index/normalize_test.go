package index

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestNormalize(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", ""},
		{"  ", ""},
		{"!!!", ""},
		{"Robert Bosch GmbH", "robert bosch"},
		{"ROBERT BOSCH G.m.b.H.", "robert bosch"},
		{"robert-bosch gmbh", "robert bosch"},
		{"Müller Elektro GmbH & Co. KG", "muller elektro"},
		{"Nestlé S.A.", "nestle"},
		{"Nestle SA", "nestle"},
		{"Ferrero S.p.A.", "ferrero"},
		{"Maersk A/S", "maersk"},
		{"Acme, Inc.", "acme"},
		{"ACME INCORPORATED", "acme"},
		{"Globex Corp.", "globex"},
		{"Globex Corporation", "globex"},
		{"Tesco PLC", "tesco"},
		{"Initech Ltd", "initech"},
		{"Initech Limited", "initech"},
		{"Philips N.V.", "philips"},
		{"McDonald's", "mcdonalds"},
		{"McDonald’s Corp", "mcdonalds"},
		{"Procter & Gamble Co.", "procter gamble"},
		{"Procter and Gamble Company", "procter gamble"},
		{"Straße Öl AG", "strasse ol"},
		{"Ørsted A/S", "orsted"},
		{"Łódź Żywiec", "lodz zywiec"},
		{"Crème Brûlée Cie", "creme brulee"},
		{"ＡＢＣ　Ｆｏｏｄｓ", "abc foods"}, // full-width letters and space
		{"AG Barr plc", "ag barr"}, // a legal-form word first is kept
		{"GmbH", "gmbh"},           // never left empty
		{"The Coca-Cola Company", "the coca cola"},
		{"3M", "3m"},
		{"7-Eleven, Inc.", "7 eleven"},
		{"J.R. Simplot Company", "jr simplot"},
		{"Foo (S.A.)", "foo"},
		{"Hewlett-Packard", "hewlett packard"},
		{"Société Générale", "societe generale"},
		{"ΑΒΓ Τρόφιμα", "αβγ τροφιμα"},
		{"tab\tand\nnewline", "tab newline"},
		{"Łukasiewicz Textil Sp. z o.o.", "lukasiewicz textil"},
		{"NESTLE S. A.", "nestle"},
		{"Bimbo S.A. de C.V.", "bimbo"},
	}
	for _, c := range cases {
		if got := Normalize(c.in); got != c.want {
			t.Errorf("Normalize(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := Normalize(Normalize(c.in)); got != c.want && c.want != "" {
			t.Errorf("Normalize not idempotent on %q: %q", c.in, got)
		}
	}
}

func TestTrigramSimilarity(t *testing.T) {
	sim := func(a, b string) float64 { return trigramSimilarity(trigrams(a), trigrams(b)) }
	if s := sim("robert bosch", "bosch robert"); s != 1 {
		t.Errorf("word order changed similarity: %v", s)
	}
	if s := sim("bosch", "bosch"); s != 1 {
		t.Errorf("self similarity %v", s)
	}
	if s := sim("siemens", "samsung"); s >= 0.3 {
		t.Errorf("siemens/samsung similarity %v", s)
	}
	if a, b := sim("siemens", "siemns"), sim("siemens", "simons"); a <= b {
		t.Errorf("one typo (%v) should be closer than a different name (%v)", a, b)
	}
	// "bosch": "  b", " bo", "bos", "osc", "sch", "ch "; "bosh": "  b", " bo", "bos", "osh", "sh ".
	if s := sim("bosch", "bosh"); math.Abs(s-3.0/8) > 1e-12 {
		t.Errorf("bosch/bosh similarity %v, want 3/8", s)
	}
}

func TestEditDistance(t *testing.T) {
	cases := []struct {
		a, b string
		max  int
		want int
	}{
		{"bosch", "bosch", 2, 0},
		{"bosch", "bsoch", 2, 1}, // swap
		{"bosch", "bosh", 2, 1},
		{"bosch", "boschx", 2, 1},
		{"bosch", "busck", 2, 2},
		{"bosch", "siemens", 2, 3}, // capped at max+1
		{"müller", "muller", 2, 1}, // runes, not bytes
		{"", "ab", 2, 2},
	}
	for _, c := range cases {
		if got := editDistance(c.a, c.b, c.max); got != c.want {
			t.Errorf("editDistance(%q, %q, %d) = %d, want %d", c.a, c.b, c.max, got, c.want)
		}
	}
}

// TestSplitRange checks on a small key space that the cells of splitRange cover [lo, hi]
// exactly once.
func TestSplitRange(t *testing.T) {
	shifts := []uint{0, 2, 4, 6}
	covered := func(cells []cellRange, v uint64) int {
		n := 0
		for _, c := range cells {
			s := shifts[c.level]
			if v>>s >= c.lo && v>>s <= c.hi {
				n++
			}
		}
		return n
	}
	for lo := uint64(0); lo < 300; lo += 7 {
		for hi := lo; hi < 300; hi += 5 {
			cells := splitRange(lo, hi, shifts)
			for v := uint64(0); v < 320; v++ {
				want := 0
				if v >= lo && v <= hi {
					want = 1
				}
				if got := covered(cells, v); got != want {
					t.Fatalf("[%d, %d]: value %d covered %d times (cells %v)", lo, hi, v, got, cells)
				}
			}
		}
	}
	// The real shifts at the ends of the key space: no overflow, sensible cell counts.
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 1000; i++ {
		lo, hi := r.Uint64(), r.Uint64()
		if lo > hi {
			lo, hi = hi, lo
		}
		for _, pair := range [][2]uint64{{lo, hi}, {0, hi}, {lo, math.MaxUint64}, {0, math.MaxUint64}} {
			cells := splitRange(pair[0], pair[1], levelShifts)
			if len(cells) == 0 || len(cells) > 2*len(levelShifts) {
				t.Fatalf("[%d, %d]: %d cells", pair[0], pair[1], len(cells))
			}
			for _, v := range []uint64{pair[0], pair[1], pair[0]/2 + pair[1]/2} {
				if covered2(cells, v) != 1 {
					t.Fatalf("[%d, %d]: %d not covered once", pair[0], pair[1], v)
				}
			}
			if pair[0] > 0 && covered2(cells, pair[0]-1) != 0 {
				t.Fatalf("[%d, %d]: lo-1 covered", pair[0], pair[1])
			}
			if pair[1] < math.MaxUint64 && covered2(cells, pair[1]+1) != 0 {
				t.Fatalf("[%d, %d]: hi+1 covered", pair[0], pair[1])
			}
		}
	}
}

func covered2(cells []cellRange, v uint64) int {
	n := 0
	for _, c := range cells {
		s := levelShifts[c.level]
		if v>>s >= c.lo && v>>s <= c.hi {
			n++
		}
	}
	return n
}

func TestTimeKeyOrder(t *testing.T) {
	times := []time.Time{
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), // clamped
		time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Unix(0, -1),
		time.Unix(0, 0),
		time.Date(2025, 3, 4, 5, 6, 7, 8, time.UTC),
		time.Date(2025, 3, 4, 5, 6, 7, 9, time.FixedZone("x", 3600)).Add(time.Hour),
		time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), // clamped
	}
	for i := 1; i < len(times); i++ {
		a, b := timeKey(times[i-1]), timeKey(times[i])
		if a >= b || exactTerm(a) >= exactTerm(b) {
			t.Errorf("key order broken between %v and %v", times[i-1], times[i])
		}
	}
	if got := time.Unix(0, int64(timeKey(times[4])^(1<<63))); !got.Equal(times[4]) {
		t.Errorf("key of %v does not give it back: %v", times[4], got)
	}
}

func TestDeletions(t *testing.T) {
	got := deletions("abc", 2)
	want := []string{"a", "ab", "abc", "ac", "b", "bc", "c"}
	if !slices.Equal(got, want) {
		t.Errorf("deletions(abc, 2) = %v, want %v", got, want)
	}
	if got := deletions("äb", 1); !slices.Equal(got, []string{"b", "ä", "äb"}) {
		t.Errorf("deletions(äb, 1) = %q", got)
	}
}

func TestCutQuery(t *testing.T) {
	long := strings.Repeat("abcdefghi ", 30)
	got := cutQuery(long)
	if n := utf8.RuneCountInString(got); n > maxQueryRunes || n < maxQueryRunes-10 || strings.HasSuffix(got, " ") {
		t.Errorf("cutQuery gave %d runes: %q", n, got)
	}
	if got := cutQuery(strings.Repeat("x", 500)); utf8.RuneCountInString(got) != maxQueryRunes {
		t.Errorf("one long word cut to %d runes", utf8.RuneCountInString(got))
	}
	if cutQuery("robert bosch") != "robert bosch" {
		t.Error("short query changed")
	}
}
