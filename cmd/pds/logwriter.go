package main

import (
	"bytes"
	"io"
	"sync"
	"time"
)

// logWriter buffers log lines so that the access log costs a request no
// system call: Write appends the line to a buffer, and a goroutine of its own
// writes full buffers out, and the one being filled every interval. There are
// two buffers: while one is written out, the other fills. Only when both are
// full (the output is slower than the lines come) does Write wait; no line is
// dropped. Lines are written in the order Write took them. Close writes what
// is left; a line written after Close goes straight to the output.
type logWriter struct {
	mu     sync.Mutex
	out    io.Writer
	buf    []byte      // the buffer being filled
	full   chan []byte // buffers and oversized lines for the writing goroutine, in order
	spare  chan []byte // written buffers, back for filling
	closed bool
	once   sync.Once

	stop   chan struct{} // ends the ticker
	ticked sync.WaitGroup
	wrote  chan struct{} // closed when the writing goroutine has written everything
}

const logBufferSize = 64 << 10

func newLogWriter(out io.Writer, every time.Duration) *logWriter {
	w := &logWriter{out: out, buf: make([]byte, 0, logBufferSize),
		full: make(chan []byte, 2), spare: make(chan []byte, 2),
		stop: make(chan struct{}), wrote: make(chan struct{})}
	w.spare <- make([]byte, 0, logBufferSize)
	go w.write()
	w.ticked.Add(1)
	go func() {
		defer w.ticked.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				w.mu.Lock()
				if !w.closed && len(w.buf) > 0 {
					w.handOff()
				}
				w.mu.Unlock()
			case <-w.stop:
				return
			}
		}
	}()
	return w
}

// write is the goroutine that writes to the output. It never takes mu, so a
// Write waiting for a spare buffer while holding mu cannot block it.
func (w *logWriter) write() {
	defer close(w.wrote)
	for b := range w.full {
		w.out.Write(b)
		if cap(b) == logBufferSize {
			w.spare <- b[:0] // never blocks: there are two buffers and room for two
		}
	}
}

// handOff sends the buffer being filled to the writing goroutine and takes a
// spare one, waiting for it when both are in flight. mu must be held.
func (w *logWriter) handOff() {
	w.full <- w.buf
	w.buf = <-w.spare
}

// Write takes one log line (slog writes each record with one call).
func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		<-w.wrote // after every line taken before Close
		return w.out.Write(p)
	}
	if len(w.buf)+len(p) > logBufferSize && len(w.buf) > 0 {
		w.handOff()
	}
	if len(p) > logBufferSize {
		w.full <- bytes.Clone(p) // after the lines before it; not kept as a buffer
		return len(p), nil
	}
	w.buf = append(w.buf, p...)
	return len(p), nil
}

// Close stops the ticker, writes what is buffered and waits until it is
// written. Closing again does nothing.
func (w *logWriter) Close() {
	w.once.Do(func() {
		close(w.stop)
		w.ticked.Wait()
		w.mu.Lock()
		w.closed = true
		if len(w.buf) > 0 {
			w.full <- w.buf
			w.buf = nil
		}
		close(w.full)
		w.mu.Unlock()
		<-w.wrote
	})
}
