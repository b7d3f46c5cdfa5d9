package mcp

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// drainTimeout bounds how long the end of input waits for answers.
const drainTimeout = 30 * time.Second

// Stdio returns the transport pds mcp serves on: newline-delimited JSON-RPC
// read from in and written to out, as the SDK's StdioTransport does, except
// that the end of in does not end the session while a request read from it
// is still unanswered (for at most 30 s). A host keeps stdin open, so this
// changes nothing for it; a script that pipes its requests in, such as
// printf '...' | pds mcp, gets every answer instead of none. (The SDK ends
// the session at the end of input at once; it offers no way to wait.)
func Stdio(in io.Reader, out io.Writer) sdk.Transport {
	d := &drain{}
	d.cond = sync.NewCond(&d.mu)
	return &sdk.IOTransport{Reader: drainReader{in, d}, Writer: answerWriter{out, d}}
}

// drain counts the requests read and the responses written.
type drain struct {
	mu              sync.Mutex
	cond            *sync.Cond
	asked, answered int
	timedOut        bool
	in, out         []byte // the partial last line of each direction
}

// lines appends p to *partial and calls each for every complete line.
func lines(partial *[]byte, p []byte, each func([]byte)) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			*partial = append(*partial, p...)
			return
		}
		line := p[:i]
		if len(*partial) > 0 {
			line = append(*partial, line...)
			*partial = (*partial)[:0]
		}
		each(line)
		p = p[i+1:]
	}
}

// message is what the counting needs of a JSON-RPC message.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method *string         `json:"method"`
}

func read(line []byte) (m message, ok bool) {
	return m, json.Unmarshal(line, &m) == nil && m.ID != nil && string(m.ID) != "null"
}

func (d *drain) sawInput(p []byte) {
	d.mu.Lock()
	defer d.mu.Unlock()
	lines(&d.in, p, func(line []byte) {
		if m, ok := read(line); ok && m.Method != nil {
			d.asked++
		}
	})
}

func (d *drain) sawOutput(p []byte) {
	d.mu.Lock()
	defer d.mu.Unlock()
	lines(&d.out, p, func(line []byte) {
		if m, ok := read(line); ok && m.Method == nil {
			d.answered++
		}
	})
	d.cond.Broadcast()
}

// wait returns when every request read has been answered, or after
// drainTimeout.
func (d *drain) wait() {
	t := time.AfterFunc(drainTimeout, func() {
		d.mu.Lock()
		d.timedOut = true
		d.cond.Broadcast()
		d.mu.Unlock()
	})
	defer t.Stop()
	d.mu.Lock()
	for d.answered < d.asked && !d.timedOut {
		d.cond.Wait()
	}
	d.mu.Unlock()
}

type drainReader struct {
	r io.Reader
	d *drain
}

func (r drainReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.d.sawInput(p[:n])
	if err == io.EOF {
		r.d.wait()
	}
	return n, err
}

func (drainReader) Close() error { return nil }

type answerWriter struct {
	w io.Writer
	d *drain
}

func (w answerWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	w.d.sawOutput(p[:n])
	return n, err
}

func (answerWriter) Close() error { return nil }
