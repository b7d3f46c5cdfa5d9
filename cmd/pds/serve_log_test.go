package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math"
	"regexp"
	"testing"
	"time"
)

// TestJSONLogHandlerWritesWhatSlogWrites logs the same records through the
// serve handler and through slog.JSONHandler: the lines are equal byte for
// byte, both for the records the handler formats itself and for those it
// passes on.
func TestJSONLogHandlerWritesWhatSlogWrites(t *testing.T) {
	at := time.Date(2026, 11, 23, 20, 1, 2, 345678000, time.UTC)
	cases := []struct {
		name  string
		level slog.Level
		msg   string
		attrs []slog.Attr
		fast  bool // formatted by the handler itself
	}{
		{"access line", slog.LevelInfo, "request", []slog.Attr{
			slog.String("request_id", "01JABC"), slog.String("method", "GET"), slog.String("path", "/v1/products/gtin:09520123456788"),
			slog.Int("status", 200), slog.Int64("bytes", 442), slog.Float64("duration_ms", 0.123),
			slog.String("tenant", "acme"), slog.String("key_id", "k1"), slog.String("code", "NOT_FOUND")}, true},
		{"floats", slog.LevelWarn, "f", []slog.Attr{slog.Float64("a", 0), slog.Float64("b", 12.5), slog.Float64("c", 1e20),
			slog.Float64("d", 0.000001), slog.Float64("e", math.Copysign(0, -1)), slog.Float64("g", 123456.789)}, true},
		{"other kinds", slog.LevelError + 2, "k", []slog.Attr{slog.Uint64("u", 7), slog.Bool("t", true), slog.Duration("d", 1500*time.Millisecond)}, true},
		{"no attrs", slog.LevelDebug, "plain message", nil, true},
		{"tiny float", slog.LevelInfo, "f", []slog.Attr{slog.Float64("x", 1e-7)}, false},
		{"huge float", slog.LevelInfo, "f", []slog.Attr{slog.Float64("x", 1e21)}, false},
		{"NaN", slog.LevelInfo, "f", []slog.Attr{slog.Float64("x", math.NaN())}, false},
		{"escaped value", slog.LevelInfo, "request", []slog.Attr{slog.String("path", "/v1/products/\"x\"\\\n<&>")}, false},
		{"non-ASCII", slog.LevelInfo, "request", []slog.Attr{slog.String("path", "/v1/products/é\u2028")}, false},
		{"escaped message", slog.LevelInfo, "two\nlines", nil, false},
		{"error", slog.LevelError, "failed", []slog.Attr{slog.Any("error", errors.New("boom"))}, false},
		{"group", slog.LevelInfo, "g", []slog.Attr{slog.Group("g", slog.Int("a", 1))}, false},
		{"empty key", slog.LevelInfo, "e", []slog.Attr{slog.Int("", 1)}, false},
		{"time value", slog.LevelInfo, "t", []slog.Attr{slog.Time("at", at)}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, tm := range []time.Time{at, {}} {
				r := slog.NewRecord(tm, c.level, c.msg, 0)
				r.AddAttrs(c.attrs...)
				var got, want bytes.Buffer
				if err := newJSONLogHandler(&got, slog.LevelDebug).Handle(context.Background(), r); err != nil {
					t.Fatal(err)
				}
				if err := slog.NewJSONHandler(&want, &slog.HandlerOptions{Level: slog.LevelDebug}).Handle(context.Background(), r); err != nil {
					t.Fatal(err)
				}
				if got.String() != want.String() {
					t.Fatalf("got  %s\nwant %s", got.String(), want.String())
				}
				if _, fast := appendRecord(nil, r); fast != c.fast {
					t.Errorf("formatted by the handler itself: %v, want %v", fast, c.fast)
				}
			}
		})
	}
	// Loggers made with With and WithGroup write what slog writes.
	var got, want bytes.Buffer
	slog.New(newJSONLogHandler(&got, slog.LevelInfo)).With("a", 1).WithGroup("g").Info("m", "b", 2)
	slog.New(slog.NewJSONHandler(&want, nil)).With("a", 1).WithGroup("g").Info("m", "b", 2)
	noTime := regexp.MustCompile(`"time":"[^"]*",`)
	if g, w := noTime.ReplaceAllString(got.String(), ""), noTime.ReplaceAllString(want.String(), ""); g != w {
		t.Fatalf("With: got %s, want %s", got.String(), want.String())
	}
	if newJSONLogHandler(&got, slog.LevelWarn).Enabled(context.Background(), slog.LevelInfo) {
		t.Fatal("enabled below its level")
	}
}
