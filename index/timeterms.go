package index

import (
	"math"
	"time"
)

// Updated times are indexed as terms at several precisions, so that a time range is a handful of
// term ranges whatever its width (the idea behind Bleve's own numeric fields, which index 16
// terms per value; four coarse levels index much faster and are enough here).
//
// A time is first turned into an order-preserving unsigned key: its Unix nanoseconds with the
// sign bit flipped. Level 0 is the exact key (field fieldUpdated, also used for sorting);
// level i > 0 is key >> levelShifts[i] (field fieldUpdatedLevels, prefixed by the level's
// letter). 2^38 ns is about 4.6 minutes, 2^44 about 4.9 hours, 2^50 about 13 days, 2^56 about
// 2.3 years and 2^62 about 146 years.
var levelShifts = []uint{0, 38, 44, 50, 56, 62}

// timeKey maps a time to its order-preserving key. Times outside the int64 nanosecond range
// (before 1678, after 2262) are clamped to its ends.
func timeKey(t time.Time) uint64 {
	return uint64(clampNanos(t)) ^ (1 << 63)
}

func clampNanos(t time.Time) int64 {
	switch {
	case t.Before(time.Unix(0, math.MinInt64)):
		return math.MinInt64
	case t.After(time.Unix(0, math.MaxInt64)):
		return math.MaxInt64
	}
	return t.UnixNano()
}

// exactTerm is the level-0 term of a key: 16 hex digits, so terms sort like keys.
func exactTerm(k uint64) string {
	var b [16]byte
	return string(appendHex16(b[:0], k))
}

// levelTermLen is the length of a level term: the level's letter and 16 hex digits.
const levelTermLen = 1 + 16

// levelTerm is the term of a (shifted) key at level lvl ≥ 1.
func levelTerm(lvl int, shifted uint64) string {
	var b [levelTermLen]byte
	return string(appendLevelTerm(b[:0], lvl, shifted))
}

// levelTerms lists the terms of a key for levels 1 and up, as substrings of one string: every
// doc carries them, and one allocation for all five costs less than one each (fmt.Sprintf for
// each would be 0.5% of a 200,000-product build's CPU).
func levelTerms(k uint64) []string {
	var b [levelTermLen * 5]byte // levels 1 to 5; more would grow buf
	buf := b[:0]
	for lvl := 1; lvl < len(levelShifts); lvl++ {
		buf = appendLevelTerm(buf, lvl, k>>levelShifts[lvl])
	}
	all := string(buf)
	out := make([]string, 0, len(levelShifts)-1)
	for i := 0; i < len(all); i += levelTermLen {
		out = append(out, all[i:i+levelTermLen])
	}
	return out
}

// appendLevelTerm appends levelTerm(lvl, shifted): the level's letter, then 16 hex digits.
func appendLevelTerm(dst []byte, lvl int, shifted uint64) []byte {
	return appendHex16(append(dst, byte('a'+lvl-1)), shifted)
}

// appendHex16 appends k as 16 lower-case hex digits, zero-padded (fmt's %016x).
func appendHex16(dst []byte, k uint64) []byte {
	const digits = "0123456789abcdef"
	for shift := 60; shift >= 0; shift -= 4 {
		dst = append(dst, digits[k>>uint(shift)&0xf])
	}
	return dst
}

// cellRange is an inclusive range of shifted keys at one level.
type cellRange struct {
	level  int
	lo, hi uint64
}

// splitRange covers the inclusive key range [lo, hi] with the fewest cells: whole cells of the
// coarsest level that fits in the middle, finer ones towards both ends. Each level contributes at
// most two ranges, each of fewer than 2^(shift difference) cells.
func splitRange(lo, hi uint64, shifts []uint) []cellRange {
	var out []cellRange
	if lo > hi {
		return nil
	}
	for lvl := 0; ; lvl++ {
		s := shifts[lvl]
		if lvl == len(shifts)-1 {
			return append(out, cellRange{lvl, lo >> s, hi >> s})
		}
		mask := uint64(1)<<shifts[lvl+1] - 1
		// First whole next-level cell starting at or after lo, last one ending at or before hi.
		loUp, okLo := lo, true
		if lo&mask != 0 {
			if lo|mask == math.MaxUint64 {
				okLo = false
			} else {
				loUp = lo | mask + 1
			}
		}
		hiDown, okHi := hi, true
		if hi&mask != mask {
			if hi&^mask == 0 {
				okHi = false
			} else {
				hiDown = hi&^mask - 1
			}
		}
		if !okLo || !okHi || loUp > hiDown {
			return append(out, cellRange{lvl, lo >> s, hi >> s})
		}
		if lo < loUp {
			out = append(out, cellRange{lvl, lo >> s, (loUp - 1) >> s})
		}
		if hiDown < hi {
			out = append(out, cellRange{lvl, (hiDown + 1) >> s, hi >> s})
		}
		lo, hi = loUp, hiDown
	}
}
