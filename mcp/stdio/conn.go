package stdio

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/productdata/pds/domain"
)

// Defaults of a Transport.
const (
	// DefaultMaxLine is the longest line read, the SDK's own limit.
	DefaultMaxLine = sdk.DefaultMaxLineLength
	// DefaultDrainTimeout bounds how long the end of input waits for the
	// answers to requests already read.
	DefaultDrainTimeout = 30 * time.Second
)

// Transport is an sdk.Transport that reads newline-delimited JSON-RPC 2.0
// from In and writes to Out (see the package comment). It is used for one
// connection.
type Transport struct {
	In  io.Reader
	Out io.Writer
	// Log gets a line for each message dropped (a response to no request of
	// the server, a cancellation of no pending request); nil for none.
	Log          *slog.Logger
	MaxLine      int           // 0: DefaultMaxLine
	DrainTimeout time.Duration // 0: DefaultDrainTimeout
}

// New returns a Transport on in and out with the defaults.
func New(in io.Reader, out io.Writer, log *slog.Logger) *Transport {
	return &Transport{In: in, Out: out, Log: log}
}

// Connect starts reading In and returns the connection.
func (t *Transport) Connect(context.Context) (sdk.Connection, error) {
	c := &conn{out: t.Out, log: t.Log, msgs: make(chan jsonrpc.Message), closed: make(chan struct{}),
		pending: map[int64]*pendingRequest{}, byKey: map[string]int64{}, drainTimeout: t.DrainTimeout}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.drainTimeout <= 0 {
		c.drainTimeout = DefaultDrainTimeout
	}
	c.cond = sync.NewCond(&c.mu)
	maxLine := t.MaxLine
	if maxLine <= 0 {
		maxLine = DefaultMaxLine
	}
	go c.readLoop(t.In, maxLine)
	return c, nil
}

// conn is one session's connection: readLoop checks each line and hands the
// valid messages to the SDK through msgs; Write translates the SDK's ids
// back to the client's.
type conn struct {
	out     io.Writer
	log     *slog.Logger
	writeMu sync.Mutex

	msgs      chan jsonrpc.Message // closed at the end of input, after readErr is set
	readErr   error
	closed    chan struct{}
	closeOnce sync.Once

	mu           sync.Mutex
	cond         *sync.Cond // signalled when a pending request is answered or cancelled, and on Close
	next         int64      // the last id given to a request
	pending      map[int64]*pendingRequest
	byKey        map[string]int64 // idKey of a pending request -> its id here
	waiting      int              // pending requests neither answered nor cancelled
	drainTimeout time.Duration
}

// pendingRequest is a request handed to the SDK and not yet answered.
type pendingRequest struct {
	id        json.RawMessage // as the client wrote it
	key       string
	cancelled bool
}

// idKey is what two ids equal as JSON values share: a string's value, a
// number's text as written (1 and 1.0 are two ids, each echoed as written).
func idKey(id json.RawMessage) string {
	if id[0] == '"' {
		return "s" + stringValue(id)
	}
	return "n" + string(id)
}

func (c *conn) readLoop(in io.Reader, maxLine int) {
	r := bufio.NewReaderSize(in, 64<<10)
	var buf []byte
	for {
		line, tooLong, err := readLine(r, buf[:0], maxLine)
		buf = line
		if tooLong {
			c.writeError(invalid(nil, "the line is longer than the %d bytes a message may have", maxLine))
		} else if line = trimJSONSpace(line); len(line) > 0 && !c.handle(line) {
			return // closed
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				c.readErr = err
			}
			close(c.msgs)
			return
		}
	}
}

// handle answers a line that is no valid message, or hands the message to
// the SDK; false when the connection closed meanwhile.
func (c *conn) handle(line []byte) bool {
	m, lerr := parseLine(line)
	if lerr != nil {
		c.writeError(lerr)
		return true
	}
	var msg jsonrpc.Message
	switch {
	case m.response:
		if msg = c.response(m); msg == nil {
			return true
		}
	case m.id != nil:
		c.mu.Lock()
		key := idKey(m.id)
		if _, dup := c.byKey[key]; dup {
			c.mu.Unlock()
			c.writeError(invalid(nil, "the id %s is already used by a request that has not been answered; give each pending request an id of its own", shorten(m.id)))
			return true
		}
		c.next++
		c.pending[c.next] = &pendingRequest{id: m.id, key: key}
		c.byKey[key] = c.next
		c.waiting++
		msg = &jsonrpc.Request{ID: sdkID(c.next), Method: m.method, Params: m.params}
		c.mu.Unlock()
	default:
		params := m.params
		if m.method == "notifications/cancelled" {
			if params = c.cancellation(params); params == nil {
				return true
			}
		}
		msg = &jsonrpc.Request{Method: m.method, Params: params}
	}
	select {
	case c.msgs <- msg:
		return true
	case <-c.closed:
		return false
	}
}

// cancellation translates the requestId of a notifications/cancelled into
// the SDK's id of the request and marks it, so that the end of input need
// not wait for its answer; nil when it names no pending request (then the
// notification is dropped: the SDK would take the id for one of its own).
func (c *conn) cancellation(params json.RawMessage) json.RawMessage {
	var p map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil || len(p["requestId"]) == 0 || checkID(p["requestId"]) != nil {
		c.log.Warn("dropped a notifications/cancelled without a string or number requestId")
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	id, ok := c.byKey[idKey(p["requestId"])]
	if !ok {
		c.log.Info("dropped a notifications/cancelled of no pending request", "requestId", shorten(p["requestId"]))
		return nil
	}
	if pr := c.pending[id]; !pr.cancelled {
		pr.cancelled = true
		c.waiting--
		c.cond.Broadcast()
	}
	p["requestId"] = json.RawMessage(strconv.FormatInt(id, 10))
	out, err := json.Marshal(p)
	if err != nil {
		return nil
	}
	return out
}

// response turns a client's response into the SDK's, or nil (dropped) when
// its id cannot be one the SDK gave: the SDK's are integers.
func (c *conn) response(m message) jsonrpc.Message {
	var id jsonrpc.ID
	if m.id[0] == '"' {
		id, _ = jsonrpc.MakeID(stringValue(m.id))
	} else if n, err := strconv.ParseInt(string(m.id), 10, 64); err == nil && n < 1<<53 && n > -1<<53 {
		id = sdkID(n)
	} else {
		c.log.Info("dropped a response whose id is no request of the server", "id", shorten(m.id))
		return nil
	}
	resp := &jsonrpc.Response{ID: id, Result: m.result}
	if m.err != nil {
		var we jsonrpc.Error
		if json.Unmarshal(m.err, &we) != nil {
			c.log.Info("dropped a response with a malformed error", "id", shorten(m.id))
			return nil
		}
		resp.Error = &we
	}
	return resp
}

// sdkID is the SDK's id of the integer n (|n| < 2^53, which its float64
// path keeps exact).
func sdkID(n int64) jsonrpc.ID {
	id, _ := jsonrpc.MakeID(float64(n))
	return id
}

// Read returns the next valid message; at the end of input, io.EOF once
// every request read has been answered (or cancelled), or after the drain
// timeout.
func (c *conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, io.EOF
	case msg, ok := <-c.msgs:
		if ok {
			return msg, nil
		}
	}
	c.drain()
	if c.readErr != nil {
		return nil, c.readErr
	}
	return nil, io.EOF
}

// drain waits until no request read waits for its answer, the connection
// closes, or the drain timeout passes.
func (c *conn) drain() {
	timedOut := false
	t := time.AfterFunc(c.drainTimeout, func() {
		c.mu.Lock()
		timedOut = true
		c.cond.Broadcast()
		c.mu.Unlock()
	})
	defer t.Stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.waiting > 0 && !timedOut && !c.isClosed() {
		c.cond.Wait()
	}
	if c.waiting > 0 {
		c.log.Warn("end of input: requests still unanswered", "count", c.waiting)
	}
}

func (c *conn) isClosed() bool {
	select {
	case <-c.closed:
		return true
	default:
		return false
	}
}

// wireResponse is a JSON-RPC response with the client's id as written.
type wireResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *jsonrpc.Error  `json:"error,omitempty"`
}

// Write writes a message of the SDK; a response goes out under the id the
// client wrote.
func (c *conn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		b, err := jsonrpc.EncodeMessage(msg)
		if err != nil {
			return err
		}
		return c.writeLine(b)
	}
	w := wireResponse{JSONRPC: "2.0", Result: resp.Result}
	if resp.Error != nil {
		w.Error = wireError(resp.Error)
		w.Result = nil
	} else if w.Result == nil {
		w.Result = json.RawMessage("null")
	}
	n, isInt := resp.ID.Raw().(int64)
	c.mu.Lock()
	pr := c.pending[n]
	if isInt && pr != nil {
		w.ID = pr.id
		delete(c.pending, n)
		delete(c.byKey, pr.key)
		if !pr.cancelled {
			c.waiting--
		}
		c.cond.Broadcast()
	}
	c.mu.Unlock()
	if w.ID == nil {
		// not a request of the client's (the SDK answers none other)
		b, err := jsonrpc.EncodeMessage(msg)
		if err != nil {
			return err
		}
		return c.writeLine(b)
	}
	b, err := domain.Marshal(w)
	if err != nil {
		return err
	}
	return c.writeLine(b)
}

// wireError is the error member for err, as the SDK writes it (its code when
// it wraps one, its text as the message), except that an error without a
// code gets JSON-RPC's -32603 (internal error) where the SDK writes 0.
func wireError(err error) *jsonrpc.Error {
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		if we == err {
			return we
		}
		return &jsonrpc.Error{Code: we.Code, Message: err.Error()}
	}
	return &jsonrpc.Error{Code: -32603, Message: err.Error()}
}

// writeError answers a line with a JSON-RPC error response.
func (c *conn) writeError(e *lineError) {
	id := e.id
	if id == nil {
		id = json.RawMessage("null")
	}
	b, err := domain.Marshal(wireResponse{JSONRPC: "2.0", ID: id, Error: &jsonrpc.Error{Code: e.code, Message: e.message}})
	if err != nil {
		c.log.Error("cannot encode an error response", "error", err)
		return
	}
	if err := c.writeLine(b); err != nil {
		c.log.Warn("cannot write an error response", "error", err)
	}
}

func (c *conn) writeLine(b []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := c.out.Write(append(b, '\n'))
	return err
}

// Close ends the connection: Read returns io.EOF from now on. It does not
// close Out, which is the process's standard output.
func (c *conn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.mu.Lock()
		c.cond.Broadcast()
		c.mu.Unlock()
	})
	return nil
}

func (c *conn) SessionID() string { return "" }

// readLine reads one line (without "\n" or "\r\n") into buf. A line longer
// than max is read to its end and returned empty with tooLong set.
func readLine(r *bufio.Reader, buf []byte, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(buf)+len(chunk) > max+2 { // the line end does not count
				tooLong, buf = true, buf[:0]
			} else {
				buf = append(buf, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return buf, tooLong, err
	}
}

// trimJSONSpace removes JSON's white space (space, tab, CR, LF) around b.
func trimJSONSpace(b []byte) []byte {
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}
