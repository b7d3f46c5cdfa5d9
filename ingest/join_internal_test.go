package ingest

import (
	"fmt"
	"testing"
)

func TestJoinSplits(t *testing.T) {
	for _, tc := range []struct {
		sample []string
		parts  int
		want   string
	}{
		{nil, 2, "[]"},
		{[]string{"a", "b", "c", "d"}, 1, "[]"},
		{[]string{"d", "c", "b", "a"}, 2, "[c]"},
		{[]string{"a", "b", "c", "d", "e", "f"}, 3, "[c e]"},
		{[]string{"a", "b\x00x", "c\x00y", "d"}, 2, "[d]"},   // an id with a zero byte is never a split
		{[]string{"a", "a", "a", "a", "b", "c"}, 3, "[a b]"}, // equal quantiles collapse
		{[]string{"a", "a", "a", "a", "a", "a"}, 3, "[a]"},
	} {
		var got []string
		for _, s := range joinSplits(append([]string(nil), tc.sample...), tc.parts) {
			got = append(got, string(s))
		}
		if fmt.Sprint(got) != tc.want {
			t.Errorf("joinSplits(%q, %d) = %q, want %s", tc.sample, tc.parts, got, tc.want)
		}
	}
}
