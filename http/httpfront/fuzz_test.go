package httpfront

import (
	"bufio"
	"bytes"
	"net/http"
	"reflect"
	"testing"

	"golang.org/x/net/http/httpguts"
)

// FuzzLaneHead checks the lane's parser against net/http's: every head
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
		got, ok := buildRequest(&http.Request{}, &h, http.Header{}, "")
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

// FuzzLaneHeadInPieces checks that a head judged in pieces, as it arrives,
// gets the verdict it gets whole: a prefix cut before a plain head's end is
// incomplete, one cut after it is that head, and a prefix is judged not
// plain, or a plain head, only when the whole is too.
func FuzzLaneHeadInPieces(f *testing.F) {
	for _, s := range []string{
		"GET /v1/products/09520123456788 HTTP/1.1\r\nHost: pds\r\nAuthorization: Bearer k\r\n\r\n",
		"HEAD /v1/products/x/dpp?a=b HTTP/1.1\r\nhost: pds:8080\r\nConnection: keep-alive\r\nX-A:\r\n\r\nGET / HTTP/1.1\r\n",
		"GET /livez HTTP/1.1\nHost: x\n\n",
		"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi",
		"GET /a HTTP/1.1\r\nHost: x\r\n  folded\r\n\r\n",
	} {
		for _, cut := range []uint16{0, 3, 17, 40} {
			f.Add([]byte(s), cut)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte, cut uint16) {
		k := int(cut) % (len(b) + 1)
		var whole, part laneHead
		n, v := parseHead(b, &whole)
		pn, pv := parseHead(b[:k], &part)
		switch {
		case pv == headComplete && (v != headComplete || pn != n || !sameHead(&part, &whole)):
			t.Fatalf("%q: its first %d bytes are a plain head of %d, the whole %v after %d", b, k, pn, v, n)
		case pv == headNotPlain && v != headNotPlain:
			t.Fatalf("%q: its first %d bytes are not plain, the whole %v", b, k, v)
		case v == headComplete && k >= n && pv != headComplete:
			t.Fatalf("%q: a plain head of %d bytes; its first %d judged %v", b, n, k, pv)
		case v == headComplete && k < n && pv != headIncomplete:
			t.Fatalf("%q: a plain head of %d bytes; its first %d judged %v, not incomplete", b, n, k, pv)
		}
	})
}

// sameHead reports whether two parsed heads are the same request.
func sameHead(a, b *laneHead) bool {
	if a.method != b.method || !bytes.Equal(a.target, b.target) || !bytes.Equal(a.host, b.host) || a.close != b.close || len(a.fields) != len(b.fields) {
		return false
	}
	for i := range a.fields {
		if !bytes.Equal(a.fields[i][0], b.fields[i][0]) || !bytes.Equal(a.fields[i][1], b.fields[i][1]) {
			return false
		}
	}
	return true
}
