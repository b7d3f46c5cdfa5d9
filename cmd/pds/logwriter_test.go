package main

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// sink is an output that records what is written to it (a syncBuffer);
// while gate is not nil, each Write first waits for gate to be closed.
type sink struct {
	syncBuffer
	gate chan struct{}
}

func (s *sink) Write(p []byte) (int, error) {
	if s.gate != nil {
		<-s.gate
	}
	return s.syncBuffer.Write(p)
}

// logLine is a log line of n bytes (n > 1) that names its index i.
func logLine(i, n int) []byte {
	l := fmt.Sprintf("%d:", i)
	return []byte(l + strings.Repeat("x", max(n-len(l)-1, 0)) + "\n")
}

func TestLogWriterKeepsEveryLineInOrder(t *testing.T) {
	tests := []struct {
		name  string
		sizes []int
	}{
		{"one line", []int{100}},
		{"lines over several buffers", repeat(300, 1000)},
		{"a line longer than the buffer between short ones", []int{200, 200, logBufferSize + 500, 200, 200}},
		{"a line longer than the buffer first", []int{3 * logBufferSize, 50}},
		{"a line the size of the buffer", []int{10, logBufferSize, 10}},
		{"lines that fill the buffer exactly", repeat(logBufferSize/4, 9)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := &sink{}
			w := newLogWriter(out, time.Hour) // no ticks: only full buffers and Close write
			var want bytes.Buffer
			for i, n := range tt.sizes {
				l := logLine(i, n)
				want.Write(l)
				if k, err := w.Write(l); k != len(l) || err != nil {
					t.Fatalf("Write = %d, %v; want %d, nil", k, err, len(l))
				}
			}
			w.Close()
			if got := out.String(); got != want.String() {
				t.Fatalf("output differs from the lines written: %d bytes, want %d", len(got), want.Len())
			}
		})
	}
}

func repeat(size, n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = size
	}
	return s
}

// TestLogWriterConcurrentLines: lines written from many goroutines at once
// all come out whole, each goroutine's in its order.
func TestLogWriterConcurrentLines(t *testing.T) {
	out := &sink{}
	w := newLogWriter(out, time.Millisecond)
	const writers, lines = 8, 2000
	var wg sync.WaitGroup
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range lines {
				w.Write(fmt.Appendf(nil, "g%d %06d %s\n", g, i, strings.Repeat("y", (g*31+i)%300)))
			}
		}()
	}
	wg.Wait()
	w.Close()
	next := make([]int, writers)
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(got) != writers*lines {
		t.Fatalf("%d lines out, want %d", len(got), writers*lines)
	}
	for _, l := range got {
		var g, i int
		if _, err := fmt.Sscanf(l, "g%d %d", &g, &i); err != nil || g < 0 || g >= writers {
			t.Fatalf("line %q is not whole: %v", l, err)
		}
		if i != next[g] || l != fmt.Sprintf("g%d %06d %s", g, i, strings.Repeat("y", (g*31+i)%300)) {
			t.Fatalf("line %q out of order or cut (want line %d of writer %d)", l, next[g], g)
		}
		next[g]++
	}
}

// TestLogWriterDoesNotWaitForTheOutput: while the output is stuck writing
// one buffer, Write fills the other instead of waiting; nothing is lost
// once the output moves again.
func TestLogWriterDoesNotWaitForTheOutput(t *testing.T) {
	out := &sink{gate: make(chan struct{})}
	w := newLogWriter(out, time.Hour)
	var want bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		// Three buffers' worth of lines would need the output; one and a
		// half (the one handed off, and half the next) must not.
		for i := 0; want.Len() < logBufferSize*3/2; i++ {
			l := logLine(i, 200)
			want.Write(l)
			w.Write(l)
		}
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("Write waited for a stuck output with a buffer free")
	}
	if got := out.String(); got != "" {
		t.Fatalf("the output wrote %d bytes while stuck", len(got))
	}
	close(out.gate)
	w.Close()
	if got := out.String(); got != want.String() {
		t.Fatalf("output differs from the lines written: %d bytes, want %d", len(got), want.Len())
	}
}

// TestLogWriterWritesEveryInterval: a line is written out within the
// interval, without Close and without filling a buffer.
func TestLogWriterWritesEveryInterval(t *testing.T) {
	out := &sink{}
	w := newLogWriter(out, 10*time.Millisecond)
	defer w.Close()
	w.Write([]byte("tick\n"))
	for deadline := time.Now().Add(time.Minute); out.String() == ""; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the buffered line was never written out")
		}
	}
	if got := out.String(); got != "tick\n" {
		t.Fatalf("output %q, want %q", got, "tick\n")
	}
}

// TestLogWriterAfterClose: a line written after Close goes straight to the
// output, after the buffered ones; Close twice is harmless.
func TestLogWriterAfterClose(t *testing.T) {
	out := &sink{}
	w := newLogWriter(out, time.Hour)
	w.Write([]byte("before\n"))
	w.Close()
	w.Close()
	w.Write([]byte("after\n"))
	if got := out.String(); got != "before\nafter\n" {
		t.Fatalf("output %q, want %q", got, "before\nafter\n")
	}
}
