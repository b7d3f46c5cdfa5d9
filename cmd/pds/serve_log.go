package main

import (
	"context"
	"io"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"time"
)

// jsonLogHandler is the slog handler of pds serve: it writes the lines
// slog.JSONHandler writes, byte for byte, but formats a record whose
// attributes are all plain (strings of printable ASCII, integers, booleans,
// durations, ordinary floats) itself, into a pooled buffer. That is every
// access log line; slog.JSONHandler formats a float through encoding/json
// and costs about 5% of the CPU of an identity GET. Any other record (and
// any logger made with With or WithGroup) goes to the slog.JSONHandler it
// wraps, so nothing it would write differently is ever written here.
type jsonLogHandler struct {
	slow  slog.Handler
	out   io.Writer
	level slog.Leveler
}

func newJSONLogHandler(out io.Writer, level slog.Leveler) *jsonLogHandler {
	return &jsonLogHandler{slow: slog.NewJSONHandler(out, &slog.HandlerOptions{Level: level}), out: out, level: level}
}

func (h *jsonLogHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level.Level() }

func (h *jsonLogHandler) WithAttrs(as []slog.Attr) slog.Handler { return h.slow.WithAttrs(as) }

func (h *jsonLogHandler) WithGroup(name string) slog.Handler { return h.slow.WithGroup(name) }

var logLines = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// Handle writes r as one line with one Write, as slog.JSONHandler does.
func (h *jsonLogHandler) Handle(ctx context.Context, r slog.Record) error {
	bp := logLines.Get().(*[]byte)
	b, ok := appendRecord((*bp)[:0], r)
	var err error
	if ok {
		_, err = h.out.Write(b)
	} else {
		err = h.slow.Handle(ctx, r)
	}
	if cap(b) <= 16<<10 {
		*bp = b
		logLines.Put(bp)
	}
	return err
}

// appendRecord appends r's JSON line; ok is false when r holds anything
// this handler leaves to slog.JSONHandler.
func appendRecord(b []byte, r slog.Record) ([]byte, bool) {
	b = append(b, '{')
	if !r.Time.IsZero() {
		if y := r.Time.Year(); y < 0 || y >= 10000 {
			return b, false
		}
		b = append(b, `"time":"`...)
		b = r.Time.AppendFormat(b, time.RFC3339Nano)
		b = append(b, `",`...)
	}
	b = append(b, `"level":"`...)
	b = append(b, r.Level.String()...)
	b = append(b, `","msg":`...)
	var ok bool
	if b, ok = appendPlainString(b, r.Message); !ok {
		return b, false
	}
	r.Attrs(func(a slog.Attr) bool {
		b, ok = appendAttr(b, a)
		return ok
	})
	if !ok {
		return b, false
	}
	return append(b, "}\n"...), true
}

// appendAttr appends ,"key":value for the kinds of value written here.
func appendAttr(b []byte, a slog.Attr) ([]byte, bool) {
	if a.Key == "" {
		return b, false // slog drops or inlines it: left to slog
	}
	b = append(b, ',')
	b, ok := appendPlainString(b, a.Key)
	if !ok {
		return b, false
	}
	b = append(b, ':')
	v := a.Value
	switch v.Kind() {
	case slog.KindString:
		return appendPlainString(b, v.String())
	case slog.KindInt64:
		return strconv.AppendInt(b, v.Int64(), 10), true
	case slog.KindUint64:
		return strconv.AppendUint(b, v.Uint64(), 10), true
	case slog.KindBool:
		return strconv.AppendBool(b, v.Bool()), true
	case slog.KindDuration:
		return strconv.AppendInt(b, int64(v.Duration()), 10), true
	case slog.KindFloat64:
		// encoding/json writes a float in the range below as
		// strconv's shortest 'f' form, and zero as 0.
		f := v.Float64()
		if abs := math.Abs(f); f != 0 && (abs < 1e-6 || abs >= 1e21) || math.IsNaN(f) || math.IsInf(f, 0) {
			return b, false
		}
		return strconv.AppendFloat(b, f, 'f', -1, 64), true
	}
	return b, false
}

// appendPlainString appends s quoted when it needs no escaping in JSON
// (printable ASCII other than '"' and '\'); ok is false otherwise.
func appendPlainString(b []byte, s string) ([]byte, bool) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return b, false
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"'), true
}
