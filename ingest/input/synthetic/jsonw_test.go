package synthetic

import (
	"encoding/json"
	"testing"
	"time"
)

func TestAppendString(t *testing.T) {
	t.Parallel()
	cases := []string{
		"", "plain", "Müller & Söhne GmbH", `quote " and \ backslash`, "<tag>", "tab\tnew\nline\rret",
		"\b\f\x00\x1f", "line\u2028sep\u2029", "bad \xff utf8", "Ångström Société Łódź 日本", "70% cocoa",
	}
	for _, s := range cases {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendString(nil, s); string(got) != string(want) {
			t.Errorf("appendString(%q) = %s, want %s", s, got, want)
		}
	}
}

func TestAppendNumbers(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, 5, 50, 99, 100, 150, 12345, 2500000} {
		want, _ := json.Marshal(float64(n) / 100)
		if got := appendHundredths(nil, n); string(got) != string(want) {
			t.Errorf("appendHundredths(%d) = %s, want %s", n, got, want)
		}
	}
}

func TestAppendTime(t *testing.T) {
	t.Parallel()
	for _, sec := range []int64{0, 951782400, 1709164799, 1709251200, windowStart, windowEnd - 1, 4102444800} {
		want := `"` + time.Unix(sec, 0).UTC().Format(time.RFC3339) + `"`
		if got := appendTime(nil, sec); string(got) != want {
			t.Errorf("appendTime(%d) = %s, want %s", sec, got, want)
		}
	}
	if got := formatTime(windowEnd); got != "2026-11-01T00:00:00Z" {
		t.Errorf("windowEnd is %s", got)
	}
	for sec := int64(windowStart); sec < windowEnd; sec += 86400*7 + 3601 {
		if got, want := formatTime(sec), time.Unix(sec, 0).UTC().Format(time.RFC3339); got != want {
			t.Fatalf("formatTime(%d) = %s, want %s", sec, got, want)
		}
	}
}
