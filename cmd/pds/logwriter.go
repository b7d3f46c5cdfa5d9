package main

import (
	"io"
	"sync"
	"time"
)

// logWriter buffers log lines and writes them out when the buffer fills and
// every interval, so that the access log costs a request no system call.
// Close writes what is left.
type logWriter struct {
	mu   sync.Mutex
	out  io.Writer
	buf  []byte
	done chan struct{}
	wg   sync.WaitGroup
}

const logBufferSize = 64 << 10

func newLogWriter(out io.Writer, every time.Duration) *logWriter {
	w := &logWriter{out: out, buf: make([]byte, 0, logBufferSize), done: make(chan struct{})}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				w.flush()
			case <-w.done:
				return
			}
		}
	}()
	return w
}

// Write takes one log line (slog writes each record with one call).
func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf)+len(p) > logBufferSize {
		w.out.Write(w.buf)
		w.buf = w.buf[:0]
	}
	if len(p) > logBufferSize {
		return w.out.Write(p)
	}
	w.buf = append(w.buf, p...)
	return len(p), nil
}

func (w *logWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.out.Write(w.buf)
		w.buf = w.buf[:0]
	}
}

// Close stops the ticker and writes what is buffered.
func (w *logWriter) Close() {
	close(w.done)
	w.wg.Wait()
	w.flush()
}
