package service

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/service/keys"
)

// Public returns the caller of a transport that answers without a key (the
// resolver's passport pages and linksets). It has no tenant, so every
// operation answers it as it answers a tenant that owns nothing: public
// products, claims and sources only, never a private product, a
// tenant_upload source or anything from one (a key's tenant is never empty,
// so no tenant's data is ever the public's). It holds products:read and
// sources:read and no limit: the transport limits its clients itself.
func Public() domain.Caller {
	return domain.Caller{KeyID: "public", Scopes: []string{keys.ScopeRead, keys.ScopeSources}}
}

// LimitReporter is implemented by a domain.Meter that can say where a caller
// stands.
type LimitReporter interface {
	Limits(c domain.Caller) (domain.Limits, bool)
}

// UsageReporter is implemented by a domain.Meter that can say where a caller stands
// against every limit of its key.
type UsageReporter interface {
	Usage(c domain.Caller) domain.KeyUsage
}

// Usage reports where c stands against its key's limits (both nil when the
// meter cannot say or the key has none). It bills nothing.
func (s *Service) Usage(c domain.Caller) domain.KeyUsage {
	if r, ok := s.meter.(UsageReporter); ok && c.KeyID != "" {
		return r.Usage(c)
	}
	return domain.KeyUsage{}
}

// Unmetered bills nothing and limits nothing.
type Unmetered struct{}

// Charge lets every call through.
func (Unmetered) Charge(context.Context, domain.Caller, string, int) error { return nil }

// Limits reports where c stands against its key's quota or rate limit; ok is
// false for an unlimited key.
func (s *Service) Limits(c domain.Caller) (domain.Limits, bool) {
	if r, ok := s.meter.(LimitReporter); ok && c.KeyID != "" {
		return r.Limits(c)
	}
	return domain.Limits{}, false
}

// Service answers every operation from the current snapshot.
type Service struct {
	current atomic.Pointer[Snapshot]
	keys    atomic.Pointer[keys.Set]
	fresh   atomic.Pointer[Freshness] // nil: no root of trust
	meter   domain.Meter
	log     *slog.Logger
}

// New returns a service answering from snap, authenticating against ks.
func New(snap *Snapshot, ks *keys.Set, meter domain.Meter, log *slog.Logger) *Service {
	if meter == nil {
		meter = Unmetered{}
	}
	s := &Service{meter: meter, log: log}
	s.current.Store(snap)
	s.keys.Store(ks)
	return s
}

// Swap makes next the current snapshot. Calls in flight finish on the old
// one, which is closed after the last of them.
func (s *Service) Swap(next *Snapshot) {
	old := s.current.Swap(next)
	if old != nil {
		old.release()
	}
}

// Current returns the snapshot being served (for reporting only).
func (s *Service) Current() *Snapshot { return s.current.Load() }

// SetKeys replaces the accepted keys (on SIGHUP).
func (s *Service) SetKeys(ks *keys.Set) { s.keys.Store(ks) }

// Close retires the current snapshot.
func (s *Service) Close() {
	if old := s.current.Swap(nil); old != nil {
		old.release()
	}
}

// snapshot takes a reference on the current snapshot.
func (s *Service) snapshot() (*Snapshot, error) {
	for i := 0; i < 100; i++ {
		snap := s.current.Load()
		if snap == nil {
			return nil, &domain.Error{Code: domain.CodeServiceUnavailable, Detail: "no snapshot is being served", RetryAfter: 1}
		}
		if snap.acquire() {
			if err := snap.Damaged(); err != nil {
				snap.release()
				return nil, domain.Internal(err)
			}
			if err := s.Withheld(); err != nil {
				snap.release()
				return nil, err
			}
			return snap, nil
		}
	}
	return nil, &domain.Error{Code: domain.CodeServiceUnavailable, Detail: "the snapshot is being swapped; retry", RetryAfter: 1}
}

// Damaged returns why the snapshot being served may not be served, or nil:
// a file of it changed or damaged (see snapshots.Snapshot.Check). Every
// operation answers SERVICE_UNAVAILABLE meanwhile.
func (s *Service) Damaged() error {
	if snap := s.current.Load(); snap != nil {
		return snap.Damaged()
	}
	return nil
}

// Authenticate reads an Authorization header value.
func (s *Service) Authenticate(authorization string) (domain.Caller, error) {
	const prefix = "Bearer "
	if len(authorization) <= len(prefix) || !equalFold(authorization[:len(prefix)], prefix) {
		return domain.Caller{}, domain.Errorf(domain.CodeUnauthenticated, "send an API key as 'Authorization: Bearer <API_KEY>'")
	}
	ks := s.keys.Load()
	k, ok := ks.Lookup(authorization[len(prefix):])
	if !ok {
		return domain.Caller{}, domain.Errorf(domain.CodeUnauthenticated, "the API key is not valid")
	}
	return CallerOf(k), nil
}

// CallerOf is the caller that key k makes.
func CallerOf(k *keys.Key) domain.Caller {
	return domain.Caller{Tenant: k.Tenant, Scopes: k.Scopes, KeyID: k.ID,
		Quota: k.Quota, QuotaPeriod: k.QuotaPeriod, Rate: k.Rate, Burst: k.Burst}
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// CheckScope refuses (FORBIDDEN) a caller whose key lacks scope for op.
// Transports call it before reading a request body, so that a key without
// the scope hears 403 before any complaint about the body; the operation
// checks again itself.
func CheckScope(c domain.Caller, op, scope string) error {
	if scope != "" && !c.HasScope(scope) {
		return domain.Errorf(domain.CodeForbidden, "this key lacks the %s scope that %s needs", scope, op)
	}
	return nil
}

// authorize checks the caller's scope and charges units.
func (s *Service) authorize(ctx context.Context, c domain.Caller, op, scope string, units int) error {
	if scope != "" && !c.HasScope(scope) {
		return domain.Errorf(domain.CodeForbidden, "this key lacks the %s scope that %s needs", scope, op)
	}
	if units == 0 {
		return nil
	}
	return s.meter.Charge(ctx, c, op, units)
}

// Result is an operation's answer: the envelope members before meta, and
// what meta carries besides duration_ms.
type Result struct {
	Body       []byte // envelope members, without braces
	Coverage   []byte // JSON of meta.coverage, or nil
	NextCursor string
	Snapshot   *Stamp  // the snapshot that answered, or nil for an answer that reads none
	buf        *[]byte // the pooled buffer Body and Coverage may alias, or nil
}

// Release gives back the pooled buffer a product answer was read into, for
// the next read. A transport calls it once it has written (or copied) the
// answer; r's Body and Coverage must not be used after it (they are cleared,
// so that a use shows). Release of an answer that holds no such buffer, or
// of nil, does nothing; an answer never released is only garbage.
func (r *Result) Release() {
	if r == nil || r.buf == nil {
		return
	}
	b := r.buf
	r.buf, r.Body, r.Coverage = nil, nil, nil
	putViewBuf(b)
}

// viewBufs are the buffers product reads copy a stored view into (see
// Result.Release): a pooled one saves the read's allocation, and an
// identity's second one (see readView).
var viewBufs = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledView is the largest buffer kept for reuse; a bigger one (a
// product with a very long evidence chain) is left to the garbage collector.
const maxPooledView = 1 << 20

func putViewBuf(b *[]byte) {
	if cap(*b) <= maxPooledView {
		*b = (*b)[:0]
		viewBufs.Put(b)
	}
}

// bodyResult encodes a Body as a Result.
func bodyResult(b domain.Body, cov *domain.Coverage) (*Result, error) {
	members, err := b.Members()
	if err != nil {
		return nil, domain.Internal(err)
	}
	r := &Result{Body: members}
	if cov != nil {
		if r.Coverage, err = domain.Marshal(cov); err != nil {
			return nil, domain.Internal(err)
		}
	}
	return r, nil
}

// AppendEnvelope appends the whole envelope of r to dst.
func (r *Result) AppendEnvelope(dst []byte, requestID string, elapsed time.Duration) []byte {
	dst = append(dst, `{"request_id":"`...)
	dst = append(dst, requestID...)
	dst = append(dst, `",`...)
	dst = append(dst, r.Body...)
	dst = append(dst, `,"meta":{"duration_ms":`...)
	dst = strconv.AppendInt(dst, elapsed.Milliseconds(), 10)
	if r.Snapshot != nil {
		dst = append(dst, r.Snapshot.meta...)
	}
	if len(r.Coverage) > 0 {
		dst = append(dst, `,"coverage":`...)
		dst = append(dst, r.Coverage...)
	}
	if r.NextCursor != "" {
		dst = append(dst, `,"next_cursor":`...)
		dst = strconv.AppendQuote(dst, r.NextCursor)
	}
	return append(dst, "}}"...)
}

// requestKey is the context key of a call's *requestInfo.
type requestKey struct{}

// requestInfo is what a transport notes about the call it serves, in one
// context value: its id, when it started, and the caller once
// authenticated (for the access log).
type requestInfo struct {
	id     string
	start  time.Time
	caller domain.Caller
}

// WithRequest returns ctx carrying a request id and the time the request
// started (so that the clock is read once for both the answer's duration
// and the access log), and room for the caller a transport authenticates,
// so that the access log can name the tenant and key.
func WithRequest(ctx context.Context, id string, start time.Time) context.Context {
	return context.WithValue(ctx, requestKey{}, &requestInfo{id: id, start: start})
}

// RequestStart returns when ctx's request started; ok is false when ctx
// carries no request.
func RequestStart(ctx context.Context) (start time.Time, ok bool) {
	if ri := requestOf(ctx); ri != nil {
		return ri.start, true
	}
	return time.Time{}, false
}

func requestOf(ctx context.Context) *requestInfo {
	ri, _ := ctx.Value(requestKey{}).(*requestInfo)
	return ri
}

// RequestID returns the request id ctx carries, or "".
func RequestID(ctx context.Context) string {
	if ri := requestOf(ctx); ri != nil {
		return ri.id
	}
	return ""
}

// NoteCaller records the authenticated caller in ctx's request, if it
// carries one.
func NoteCaller(ctx context.Context, c domain.Caller) {
	if ri := requestOf(ctx); ri != nil {
		ri.caller = c
	}
}

// NotedCaller returns the caller recorded in ctx's request, or nil.
func NotedCaller(ctx context.Context) *domain.Caller {
	if ri := requestOf(ctx); ri != nil && ri.caller.KeyID != "" {
		return &ri.caller
	}
	return nil
}

// NewRequestID returns a fresh request id: "req_" and a ULID.
func NewRequestID() string { return "req_" + ulid.Make().String() }
