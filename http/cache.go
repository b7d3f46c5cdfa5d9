package http

import (
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"
	"github.com/productdata/pds/service"
)

// The response headers that name the snapshot an answer was read from.
const (
	headerBuildID   = "Pds-Build-Id"
	headerCreatedAt = "Pds-Snapshot-Created-At"
)

// stampHeaders are the header values of one snapshot, made once per
// snapshot rather than once per answer.
type stampHeaders struct {
	stamp              *service.Stamp
	buildID, createdAt []string
}

// lastStamp holds the header values of the snapshot served last.
var lastStamp atomic.Pointer[stampHeaders]

// setSnapshotHeaders names the snapshot that answered, when one did.
func setSnapshotHeaders(h http.Header, st *service.Stamp) {
	if st == nil {
		return
	}
	sh := lastStamp.Load()
	if sh == nil || sh.stamp != st {
		sh = &stampHeaders{stamp: st, buildID: []string{st.BuildID}, createdAt: []string{st.CreatedAt}}
		lastStamp.Store(sh)
	}
	h[headerBuildID] = sh.buildID
	h[headerCreatedAt] = sh.createdAt
}

// etagOf is the entity tag of a product read: the build id of the snapshot
// and a 64-bit xxHash of the answer (its members and meta.coverage, which
// leave out only request_id and duration_ms). It is weak because the bytes
// differ from call to call in those two members and in their content
// coding; the answer itself is the same.
func etagOf(res *service.Result) string {
	var d xxhash.Digest
	d.Reset()
	d.Write(res.Body)
	d.Write([]byte{0})
	d.Write(res.Coverage)
	var arr [96]byte
	b := append(arr[:0], `W/"`...)
	if res.Snapshot != nil {
		b = append(b, res.Snapshot.BuildID...)
		b = append(b, '-')
	}
	b = strconv.AppendUint(b, d.Sum64(), 16)
	return string(append(b, '"'))
}

// notModified reports whether the If-None-Match header values name etag
// (weak comparison, RFC 9110 section 13.1.2) or are "*".
func notModified(values []string, etag string) bool {
	opaque := strings.TrimPrefix(etag, "W/")
	for _, v := range values {
		for _, tag := range strings.Split(v, ",") {
			tag = strings.TrimSpace(tag)
			if tag == "*" || strings.TrimPrefix(tag, "W/") == opaque {
				return true
			}
		}
	}
	return false
}

// isProductRead reports whether the operation reads one product (identity,
// passport or evidence), whose answers carry an ETag.
func isProductRead(op string) bool {
	return op == "get_product" || op == "get_passport" || op == "get_evidence"
}
