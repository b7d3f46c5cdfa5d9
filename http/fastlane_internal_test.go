package http

import (
	"bufio"
	"bytes"
	"net/http"
	"net/url"
	"reflect"
	"testing"

	"golang.org/x/net/http/httpguts"
)

// FuzzLaneHead checks the fast lane's parser against net/http's: every head
// the lane takes as plain, net/http's server reads too, to the same length,
// into the same request; the seeds are in testdata/fuzz/FuzzLaneHead.
func FuzzLaneHead(f *testing.F) {
	for _, s := range []string{
		"GET /v1/products/09520123456788 HTTP/1.1\r\nHost: pds\r\nAuthorization: Bearer k\r\n\r\n",
		"HEAD /v1/products/x/dpp?a=b HTTP/1.1\r\nhost: pds:8080\r\naccept-encoding: gzip\r\nPragma: no-cache\r\n\r\nGET / HTTP/1.1\r\n",
		"GET /v1/products/https%3A%2F%2Fid.gs1.org%2F01%2F1 HTTP/1.1\r\nHost: [::1]:80\r\nConnection: close\r\nX-A:\r\nX-A: \t2 \r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var h laneHead
		n, verdict := parseHead(b, &h)
		if verdict != headComplete {
			return
		}
		var fl fastLane
		got, ok := fl.request(&http.Request{}, &h, http.Header{}, "")
		br := bufio.NewReaderSize(bytes.NewReader(b), len(b)+16)
		want, err := http.ReadRequest(br)
		if !ok {
			if err == nil {
				t.Fatalf("%q: the lane refused the target that net/http took", b[:n])
			}
			return // handed over: net/http answers 400
		}
		if err != nil {
			t.Fatalf("the lane takes %q; net/http refuses it: %v", b[:n], err)
		}
		if used := len(b) - br.Buffered(); used != n {
			t.Fatalf("%q: the lane read %d bytes, net/http %d", b, n, used)
		}
		// What net/http's server refuses beyond ReadRequest (which takes
		// the Host out of the header; a missing one is "the no Host" case of
		// TestLaneAnswersMatchNetHTTP).
		if !httpguts.ValidHostHeader(want.Host) {
			t.Fatalf("the lane takes %q; net/http's server refuses its Host %q", b[:n], want.Host)
		}
		for k, vv := range want.Header {
			if !httpguts.ValidHeaderFieldName(k) {
				t.Fatalf("the lane takes %q; net/http's server refuses the name %q", b[:n], k)
			}
			for _, v := range vv {
				if !httpguts.ValidHeaderFieldValue(v) {
					t.Fatalf("the lane takes %q; net/http's server refuses the value %q", b[:n], v)
				}
			}
		}
		if got.Method != want.Method || got.RequestURI != want.RequestURI || !reflect.DeepEqual(got.URL, want.URL) ||
			got.Host != want.Host || !reflect.DeepEqual(got.Header, want.Header) || got.Close != want.Close ||
			want.ContentLength != 0 || want.Body != http.NoBody || got.Proto != want.Proto {
			t.Fatalf("%q:\nthe lane: %s %s %+v host %q close %v %v\nnet/http: %s %s %+v host %q close %v %v (body %d)", b[:n],
				got.Method, got.RequestURI, got.URL, got.Host, got.Close, got.Header,
				want.Method, want.RequestURI, want.URL, want.Host, want.Close, want.Header, want.ContentLength)
		}
	})
}

// TestPlainPathMatchesParseRequestURI: every target plainPath takes,
// url.ParseRequestURI parses into a URL with that Path and nothing else,
// byte by byte over printable ASCII, and at the path's ends.
func TestPlainPathMatchesParseRequestURI(t *testing.T) {
	taken := 0
	for c := byte(0x20); c < 0x80; c++ {
		for _, target := range []string{"/a" + string(c) + "b", "/" + string(c), "//" + string(c) + "/x", "/v1/products/" + string(c)} {
			if !plainPath([]byte(target)) {
				continue
			}
			taken++
			u, err := url.ParseRequestURI(target)
			if err != nil || !reflect.DeepEqual(u, &url.URL{Path: target}) {
				t.Errorf("%q: plainPath takes it; url.ParseRequestURI gives %#v, %v", target, u, err)
			}
		}
	}
	if taken == 0 {
		t.Fatal("plainPath took nothing")
	}
}
