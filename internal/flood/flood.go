package flood

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Options say what flood to send and how to probe.
type Options struct {
	// Addr is the server's host:port.
	Addr string
	// Silent floods with connections that send nothing; otherwise each
	// sends Request, reads its answer and stays open (keep-alive).
	Silent bool
	// Conns is the flood's size: the connections it opens first and then
	// holds while the probes run, opening a new one for each the server
	// closes or refuses.
	Conns int
	// From and ProbeFrom are the flood's and the new client's source IP
	// addresses (on loopback, any of 127.0.0.0/8).
	From, ProbeFrom string
	// Request is the raw request of the keep-alive flood and of the probes.
	Request string
	// ProbeFor is how long the new client keeps sending requests, one
	// connection each, Interval apart.
	ProbeFor, Interval time.Duration
	// Workers open the flood's connections in parallel (default 32).
	Workers int
	// Timeout bounds each dial and each answer (default 30 s): a request
	// that does not get an answer by then counts as refused.
	Timeout time.Duration
}

// Result is what the flood and the probes saw.
type Result struct {
	// Opened is how many connections the flood opened first; Answered how
	// many of the keep-alive ones got a 200 (the others were refused).
	Opened, Answered int
	// Replaced is how many flood connections were opened anew, for one
	// the server closed or refused, while the probes ran.
	Replaced int64
	// Probes, Served and Refused count the new client's requests: served
	// with a 200, refused (any other answer, or none).
	Probes, Served, Refused int
	// RefusedAfter1s counts the refused requests sent a second or more
	// after the first.
	RefusedAfter1s int
	// FirstServed is the time from the first probe's start to the end of
	// the first served request (-1: none was served).
	FirstServed time.Duration
	// Refusals counts the refused requests by what they got.
	Refusals map[string]int
}

func (r Result) String() string {
	first := "none"
	if r.FirstServed >= 0 {
		first = fmt.Sprintf("%.0f", float64(r.FirstServed.Microseconds())/1000)
	}
	refusals := "none"
	if len(r.Refusals) > 0 {
		var kinds []string
		for _, k := range slices.Sorted(maps.Keys(r.Refusals)) {
			kinds = append(kinds, fmt.Sprintf("%s:%d", strings.ReplaceAll(k, " ", "_"), r.Refusals[k]))
		}
		refusals = strings.Join(kinds, ",")
	}
	return fmt.Sprintf("opened=%d answered=%d replaced=%d probes=%d served=%d refused=%d refused_after_1s=%d first_served_ms=%s refusals=%s",
		r.Opened, r.Answered, r.Replaced, r.Probes, r.Served, r.Refused, r.RefusedAfter1s, first, refusals)
}

// Run floods and probes, and closes every connection it opened before it
// returns. An error means the flood could not be opened at all.
func Run(o Options) (Result, error) {
	if o.Workers <= 0 {
		o.Workers = 32
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	f := &flooder{o: o, conns: make([]net.Conn, o.Conns)}
	defer f.closeAll()
	res := Result{FirstServed: -1, Refusals: map[string]int{}}
	if err := f.open(&res); err != nil {
		return res, err
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range o.Workers {
		wg.Add(1)
		go func() { defer wg.Done(); f.hold(w, stop) }()
	}
	f.probe(&res)
	close(stop)
	wg.Wait()
	res.Replaced = f.replaced.Load()
	return res, nil
}

type flooder struct {
	o        Options
	mu       sync.Mutex
	conns    []net.Conn // the flood's open connections, by slot
	replaced atomic.Int64
}

// dial connects from ip.
func (f *flooder) dial(ip string) (net.Conn, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: f.o.Timeout}
	return d.Dial("tcp", f.o.Addr)
}

// exchange sends the request on c and reads its answer: "200", another
// status, or what went wrong.
func (f *flooder) exchange(c net.Conn) string {
	c.SetDeadline(time.Now().Add(f.o.Timeout))
	defer c.SetDeadline(time.Time{})
	if _, err := io.WriteString(c, f.o.Request); err != nil {
		return "write failed"
	}
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		var ne net.Error
		switch {
		case errors.As(err, &ne) && ne.Timeout():
			return "no answer in time"
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return "closed"
		}
		return "reset"
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return fmt.Sprint(res.StatusCode)
}

// fill opens the flood connection of slot i: a keep-alive one that got
// its 200 stays, any other is closed. It reports the answer.
func (f *flooder) fill(i int) (string, error) {
	c, err := f.dial(f.o.From)
	if err != nil {
		return "", err
	}
	got := "open"
	if !f.o.Silent {
		if got = f.exchange(c); got != "200" {
			c.Close()
			c = nil
		}
	}
	f.mu.Lock()
	f.conns[i] = c
	f.mu.Unlock()
	return got, nil
}

// open opens the flood, Workers connections at a time.
func (f *flooder) open(res *Result) error {
	next := make(chan int)
	var mu sync.Mutex
	var firstErr error
	var wg sync.WaitGroup
	for range f.o.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				got, err := f.fill(i)
				mu.Lock()
				switch {
				case err != nil:
					firstErr = cmp(firstErr, err)
				case got == "200":
					res.Opened++
					res.Answered++
				default:
					res.Opened++
				}
				mu.Unlock()
			}
		}()
	}
	for i := range f.o.Conns {
		next <- i
	}
	close(next)
	wg.Wait()
	if res.Opened == 0 && firstErr != nil {
		return fmt.Errorf("flood: no connection opened: %w", firstErr)
	}
	return nil
}

func cmp(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// hold keeps the flood up until stop: worker w looks at its slots'
// connections and opens a new one for each the server closed (or answered
// with a refusal), then waits a moment before it looks again.
func (f *flooder) hold(w int, stop <-chan struct{}) {
	for {
		for i := w; i < f.o.Conns; i += f.o.Workers {
			select {
			case <-stop:
				return
			default:
			}
			f.mu.Lock()
			c := f.conns[i]
			f.mu.Unlock()
			if c != nil && !serverClosed(c) {
				continue
			}
			if c != nil {
				c.Close()
			}
			if _, err := f.fill(i); err == nil {
				f.replaced.Add(1)
			}
		}
		select {
		case <-stop:
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// probe sends the new client's requests, one connection each.
func (f *flooder) probe(res *Result) {
	start := time.Now()
	for time.Since(start) < f.o.ProbeFor {
		sent := time.Since(start)
		got := "dial failed"
		if c, err := f.dial(f.o.ProbeFrom); err == nil {
			got = f.exchange(c)
			c.Close()
		}
		res.Probes++
		if got == "200" {
			res.Served++
			if res.FirstServed < 0 {
				res.FirstServed = time.Since(start)
			}
		} else {
			res.Refused++
			res.Refusals[got]++
			if sent >= time.Second {
				res.RefusedAfter1s++
			}
		}
		time.Sleep(f.o.Interval)
	}
}

func (f *flooder) closeAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, c := range f.conns {
		if c != nil {
			c.Close()
			f.conns[i] = nil
		}
	}
}
