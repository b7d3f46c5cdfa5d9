package metrics

import (
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// MaxTenants bounds the tenant label: the first MaxTenants tenants seen keep
// their name, every later one is reported as OtherTenant.
const MaxTenants = 100

// OtherTenant is the tenant label of tenants past MaxTenants.
const OtherTenant = "other"

// Metrics is the set of pds collectors, registered on their own registry
// with the Go runtime and process collectors.
type Metrics struct {
	reg *prometheus.Registry

	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	inFlight prometheus.Gauge
	shed     *prometheus.CounterVec
	idleShut prometheus.Counter

	snapshotInfo    *prometheus.GaugeVec
	snapshotCreated prometheus.Gauge
	swaps           prometheus.Counter
	swapRefusals    *prometheus.CounterVec
	updates         *prometheus.CounterVec
	updateBytes     *prometheus.CounterVec
	keyReloads      *prometheus.CounterVec

	refusals *prometheus.CounterVec
	mcpCalls *prometheus.CounterVec

	mu      sync.RWMutex
	routes  map[string]*Route
	tenants map[string]struct{}

	infoMu   sync.Mutex
	lastInfo prometheus.Labels

	trustOnce    sync.Once
	trustExpires prometheus.Gauge
	trustVersion prometheus.Gauge
	trustRoot    prometheus.Gauge
	trustExpiry  atomic.Int64 // Unix nanoseconds of trustExpires, for pds_trust_stale
}

// New registers the collectors; usage, when not nil, is asked for the
// tenants' quota use at every scrape.
func New(usage func() []TenantUsage) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(), routes: map[string]*Route{}, tenants: map[string]struct{}{}}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "pds_http_requests_total", Help: "HTTP requests answered, by route pattern, method and status code.",
	}, []string{"route", "method", "code"})
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "pds_http_request_duration_seconds", Help: "Time from routing a request to its last byte written, by route pattern.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	}, []string{"route"})
	m.inFlight = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "pds_http_requests_in_flight", Help: "Requests being answered now.",
	})
	m.shed = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "pds_http_shed_total", Help: "Requests and connections refused because a limit was reached, by what was limited (requests, connections, connections_per_address).",
	}, []string{"limit"})
	m.idleShut = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "pds_http_idle_connections_closed_total", Help: "Idle connections closed, least recently used first, to admit a new one at the connection cap.",
	})
	m.snapshotInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "pds_snapshot_info", Help: "The snapshot being served (value 1): build id, creation time and format version.",
	}, []string{"build_id", "created_at", "format_version"})
	m.snapshotCreated = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "pds_snapshot_created_timestamp_seconds", Help: "When the snapshot being served was built, in Unix seconds (its age is time() minus this).",
	})
	m.swaps = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "pds_snapshot_swaps_total", Help: "Swaps to a new snapshot.",
	})
	m.swapRefusals = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "pds_snapshot_swap_refusals_total", Help: "New snapshots refused, by reason (unreadable_pointer, open_failed, verify_failed, known_bad).",
	}, []string{"reason"})
	m.updates = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "pds_snapshot_updates_total", Help: "Swaps to a new snapshot, by how the follower or pull brought it: delta, full, or unknown (not brought by a pull).",
	}, []string{"via"})
	m.updateBytes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "pds_snapshot_update_bytes_total", Help: "Bytes fetched from the origin for the snapshots swapped to, by how they came (delta, full).",
	}, []string{"via"})
	m.keyReloads = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "pds_keys_reloads_total", Help: "Reloads of the keys file, by result (ok, failed).",
	}, []string{"result"})
	m.refusals = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "pds_tenant_refusals_total", Help: "Calls refused by a rate limit or quota, by tenant and code (RATE_LIMITED, TENANT_QUOTA_EXCEEDED).",
	}, []string{"tenant", "code"})
	m.mcpCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "pds_mcp_tool_calls_total", Help: "MCP tool calls, by tool and outcome (ok, error, unknown_tool).",
	}, []string{"tool", "outcome"})
	m.reg.MustRegister(m.requests, m.duration, m.inFlight, m.shed, m.idleShut, m.snapshotInfo, m.snapshotCreated,
		m.swaps, m.swapRefusals, m.updates, m.updateBytes, m.keyReloads, m.refusals, m.mcpCalls,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if usage != nil {
		m.reg.MustRegister(&usageCollector{m: m, usage: usage})
	}
	return m
}

// Handler serves the metrics in the Prometheus exposition formats.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Registry is the registry the collectors are on (for tests and gathering).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Route returns the collectors of one route pattern, made once and cached.
func (m *Metrics) Route(pattern string) *Route {
	m.mu.RLock()
	r := m.routes[pattern]
	m.mu.RUnlock()
	if r != nil {
		return r
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if r = m.routes[pattern]; r == nil {
		r = &Route{m: m, pattern: pattern, duration: m.duration.WithLabelValues(pattern), counters: map[uint32]prometheus.Counter{}}
		m.routes[pattern] = r
	}
	return r
}

// Route is the collectors of one route pattern.
type Route struct {
	m        *Metrics
	pattern  string
	duration prometheus.Observer
	mu       sync.RWMutex
	counters map[uint32]prometheus.Counter // by methodIndex<<16 | code
}

var methods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
	http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace}

// methodIndex maps a method to a small number; methods outside the standard
// ones share the label "other".
func methodIndex(method string) uint32 {
	for i, m := range methods {
		if m == method {
			return uint32(i)
		}
	}
	return uint32(len(methods))
}

// Observe counts one answered request and its duration.
func (r *Route) Observe(method string, code int, d time.Duration) {
	key := methodIndex(method)<<16 | uint32(code&0xffff)
	r.mu.RLock()
	c := r.counters[key]
	r.mu.RUnlock()
	if c == nil {
		label := "other"
		if i := methodIndex(method); int(i) < len(methods) {
			label = methods[i]
		}
		c = r.m.requests.WithLabelValues(r.pattern, label, strconv.Itoa(code))
		r.mu.Lock()
		r.counters[key] = c
		r.mu.Unlock()
	}
	c.Inc()
	r.duration.Observe(d.Seconds())
}

// Start counts a request in flight; call Done when it is answered.
func (m *Metrics) Start() { m.inFlight.Inc() }

// Done counts a request in flight as answered.
func (m *Metrics) Done() { m.inFlight.Dec() }

// Shed counts a refusal because limit ("requests", "connections" or
// "connections_per_address") was reached.
func (m *Metrics) Shed(limit string) { m.shed.WithLabelValues(limit).Inc() }

// IdleClosed counts an idle connection closed to admit a new one.
func (m *Metrics) IdleClosed() { m.idleShut.Inc() }

// Tenant returns the label for tenant: its name for the first MaxTenants
// tenants seen, OtherTenant after that.
func (m *Metrics) Tenant(tenant string) string {
	m.mu.RLock()
	_, ok := m.tenants[tenant]
	n := len(m.tenants)
	m.mu.RUnlock()
	if ok {
		return tenant
	}
	if n >= MaxTenants {
		return OtherTenant
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.tenants[tenant]; ok || len(m.tenants) < MaxTenants {
		m.tenants[tenant] = struct{}{}
		return tenant
	}
	return OtherTenant
}

// Refused counts a call of tenant refused with code (RATE_LIMITED or
// TENANT_QUOTA_EXCEEDED).
func (m *Metrics) Refused(tenant, code string) {
	m.refusals.WithLabelValues(m.Tenant(tenant), code).Inc()
}

// ToolCall counts an MCP tool call; outcome is ok, error or unknown_tool.
// A name that is not a known tool is counted as tool "unknown".
func (m *Metrics) ToolCall(tool, outcome string) {
	m.mcpCalls.WithLabelValues(tool, outcome).Inc()
}

// Snapshot reports the snapshot now served.
func (m *Metrics) Snapshot(buildID string, createdAt time.Time, formatVersion int) {
	l := prometheus.Labels{"build_id": buildID, "created_at": createdAt.UTC().Format(time.RFC3339), "format_version": strconv.Itoa(formatVersion)}
	m.infoMu.Lock()
	if m.lastInfo != nil {
		m.snapshotInfo.Delete(m.lastInfo)
	}
	m.lastInfo = l
	m.infoMu.Unlock()
	m.snapshotInfo.With(l).Set(1)
	m.snapshotCreated.Set(float64(createdAt.Unix()))
}

// Trust reports the freshness of a replica's root of trust: when its kept
// timestamp statement expires (zero: it keeps none), that statement's
// version and the trusted root's. Its metrics are registered at the first
// call, so a server that trusts no root has none.
func (m *Metrics) Trust(expires time.Time, timestampVersion, rootVersion int64) {
	m.trustOnce.Do(func() {
		m.trustExpires = prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "pds_trust_timestamp_expires_timestamp_seconds", Help: "When the timestamp statement the replica keeps stops holding, in Unix seconds (0: it keeps none); the time left is this minus time().",
		})
		m.trustVersion = prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "pds_trust_timestamp_version", Help: "Version of the timestamp statement the replica keeps (0: none).",
		})
		m.trustRoot = prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "pds_trust_root_version", Help: "Version of the newest root of trust the replica holds.",
		})
		stale := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "pds_trust_stale", Help: "1 when the kept timestamp statement has expired (or there is none): the replica has not heard from its origin within the timestamp's validity.",
		}, func() float64 {
			if time.Now().UnixNano() < m.trustExpiry.Load() {
				return 0
			}
			return 1
		})
		m.reg.MustRegister(m.trustExpires, m.trustVersion, m.trustRoot, stale)
	})
	if expires.IsZero() {
		m.trustExpires.Set(0)
		m.trustExpiry.Store(0)
	} else {
		m.trustExpires.Set(float64(expires.Unix()))
		m.trustExpiry.Store(expires.UnixNano())
	}
	m.trustVersion.Set(float64(timestampVersion))
	m.trustRoot.Set(float64(rootVersion))
}

// Swapped counts a swap to a new snapshot.
func (m *Metrics) Swapped() { m.swaps.Inc() }

// Updated counts a swap to a snapshot that came via delta or full (see
// fleet.Arrival) with the bytes fetched for it; via is "unknown" for
// one no pull recorded.
func (m *Metrics) Updated(via string, bytes int64) {
	m.updates.WithLabelValues(via).Inc()
	if via != "unknown" {
		m.updateBytes.WithLabelValues(via).Add(float64(bytes))
	}
}

// SwapRefused counts a refused new snapshot by reason.
func (m *Metrics) SwapRefused(reason string) { m.swapRefusals.WithLabelValues(reason).Inc() }

// KeysReloaded counts a reload of the keys file.
func (m *Metrics) KeysReloaded(ok bool) {
	if ok {
		m.keyReloads.WithLabelValues("ok").Inc()
	} else {
		m.keyReloads.WithLabelValues("failed").Inc()
	}
}

// TenantUsage is one tenant's quota use in the current period.
type TenantUsage struct {
	Tenant      string
	Used, Limit int64 // Limit 0: not known (not reported)
}

// usageCollector reports the tenants' quota use at scrape time.
type usageCollector struct {
	m     *Metrics
	usage func() []TenantUsage
}

var (
	usedDesc  = prometheus.NewDesc("pds_tenant_quota_used", "Units billed to the tenant in the current quota period.", []string{"tenant"}, nil)
	limitDesc = prometheus.NewDesc("pds_tenant_quota_limit", "The tenant's quota for the period.", []string{"tenant"}, nil)
)

func (c *usageCollector) Describe(ch chan<- *prometheus.Desc) { ch <- usedDesc; ch <- limitDesc }

func (c *usageCollector) Collect(ch chan<- prometheus.Metric) {
	used := map[string][2]int64{}
	var order []string
	for _, u := range c.usage() {
		t := c.m.Tenant(u.Tenant)
		cur, seen := used[t]
		if !seen {
			order = append(order, t)
		}
		used[t] = [2]int64{cur[0] + u.Used, cur[1] + u.Limit}
	}
	for _, t := range order {
		v := used[t]
		ch <- prometheus.MustNewConstMetric(usedDesc, prometheus.GaugeValue, float64(v[0]), t)
		if v[1] > 0 {
			ch <- prometheus.MustNewConstMetric(limitDesc, prometheus.GaugeValue, float64(v[1]), t)
		}
	}
}
