package kv

import (
	"encoding/binary"
	"slices"
)

// coverDict makes a raw dictionary of about size bytes from samples: the
// segments of segment bytes that hold the most content common to many
// samples. It follows the idea of zstd's own trainer (COVER, in zstd's
// dictBuilder), simplified: every 8-byte run (a d-mer) counts the samples
// it occurs in; the samples, joined, are cut into as many epochs as the
// dictionary has segments, and each epoch gives its window of segment bytes
// whose distinct d-mers count most; the d-mers taken count nothing after.
// The segments are joined lowest score first, so that the most useful are
// nearest to the data (zstd's offsets are cheaper there).
//
// Why not a library: klauspost/compress's dict.BuildZstdDict sorts with a
// comparison that depends on map iteration order and picks among map
// entries at random, so the same samples gave different dictionaries, and
// so different snapshots; zstd's trainer itself is C. At 50,000 generated
// products this dictionary made the passport and evidence frames a quarter
// smaller than the samples' last bytes did.
func coverDict(samples [][]byte, size, segment int) []byte {
	const dmer = 8
	all := slices.Concat(samples...)
	if len(all) <= size {
		return all
	}
	// ids[i] is the d-mer at all[i] (-1 where it would cross a sample's end).
	ids := make([]int32, len(all))
	index := map[uint64]int32{}
	var freq, last []int32 // per d-mer: samples it occurs in, the last one counted
	at := 0
	for si, s := range samples {
		for i := range s {
			if i+dmer > len(s) {
				ids[at+i] = -1
				continue
			}
			v := binary.LittleEndian.Uint64(s[i:])
			id, ok := index[v]
			if !ok {
				id = int32(len(freq))
				index[v] = id
				freq, last = append(freq, 0), append(last, -1)
			}
			ids[at+i] = id
			if last[id] != int32(si) {
				last[id] = int32(si)
				freq[id]++
			}
		}
		at += len(s)
	}
	index = nil

	type choice struct {
		score int64
		at    int
	}
	segments := max(size/segment, 1)
	epoch := len(all) / segments
	inWindow := make([]int32, len(freq))
	var score int64
	add := func(id int32) {
		if id >= 0 {
			if inWindow[id]++; inWindow[id] == 1 {
				score += int64(freq[id])
			}
		}
	}
	remove := func(id int32) {
		if id >= 0 {
			if inWindow[id]--; inWindow[id] == 0 {
				score -= int64(freq[id])
			}
		}
	}
	var chosen []choice
	for e := range segments {
		lo, hi := e*epoch, min((e+1)*epoch, len(all))
		if hi-lo < segment {
			continue
		}
		score = 0
		for i := lo; i < lo+segment; i++ {
			add(ids[i])
		}
		best := choice{score, lo}
		for at := lo + 1; at+segment <= hi; at++ {
			remove(ids[at-1])
			add(ids[at+segment-1])
			if score > best.score {
				best = choice{score, at}
			}
		}
		for i := hi - segment; i < hi; i++ {
			remove(ids[i])
		}
		for i := best.at; i < best.at+segment; i++ {
			if id := ids[i]; id >= 0 {
				freq[id] = 0
			}
		}
		chosen = append(chosen, best)
	}
	slices.SortStableFunc(chosen, func(a, b choice) int {
		switch {
		case a.score < b.score:
			return -1
		case a.score > b.score:
			return 1
		}
		return 0
	})
	d := make([]byte, 0, len(chosen)*segment)
	for _, c := range chosen {
		d = append(d, all[c.at:c.at+segment]...)
	}
	return d
}
