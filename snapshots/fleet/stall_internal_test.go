package fleet

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestStalledHTTPOriginFailsTheRead: an https origin that sends nothing
// (no headers, or no more of the body) or trickles bytes far below the
// floor fails the read once the stall limit passes, rather than holding
// the pull, and the snapshots folder's lock, for ever; a reader that is
// slow itself is not taken for a stalled origin.
func TestStalledHTTPOriginFailsTheRead(t *testing.T) {
	defer func(d time.Duration) { stallLimit = d }(stallLimit)
	stallLimit = 100 * time.Millisecond
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/headers":
		case "/body":
			w.Write([]byte("{\"partial"))
			w.(http.Flusher).Flush()
		case "/whole":
			w.Write(make([]byte, 3*stallBytes))
			return
		case "/trickle":
			for r.Context().Err() == nil {
				if _, err := w.Write([]byte("x")); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				time.Sleep(10 * time.Millisecond)
			}
		}
		<-r.Context().Done()
	}))
	defer srv.Close()
	o, err := OpenOrigin(srv.URL+"/", S3Config{})
	if err != nil {
		t.Fatal(err)
	}
	// Without the stall limit the reads would wait for this.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, name := range []string{"headers", "body", "trickle"} {
		rc, err := o.Open(ctx, name, 0)
		if err == nil {
			_, err = io.ReadAll(rc)
			rc.Close()
		}
		if !errors.Is(err, errStalled) {
			t.Errorf("%s: %v; want the stall named", name, err)
		}
		t.Logf("%s: %v", name, err)
	}
	// A reader that waits longer than the limit between its reads (busy
	// applying a delta, say) is not taken for a stalled origin.
	rc, err := o.Open(ctx, "whole", 0)
	if err != nil {
		t.Fatal(err)
	}
	var got int
	for buf := make([]byte, stallBytes/2); ; {
		n, err := rc.Read(buf)
		got += n
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("a slow reader of a prompt origin: %v", err)
		}
		time.Sleep(stallLimit * 3 / 2)
	}
	rc.Close()
	if got != 3*stallBytes {
		t.Errorf("read %d bytes of %d", got, 3*stallBytes)
	}
	// An S3 endpoint that never answers.
	s3, err := OpenOrigin("s3://bucket/nightly", S3Config{Endpoint: srv.URL, Region: "eu-west-1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s3.Open(ctx, "latest", 0); !errors.Is(err, errStalled) {
		t.Errorf("s3: %v; want the stall named", err)
	}
}
