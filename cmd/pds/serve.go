package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	pdshttp "github.com/productdata/pds/http"
	"github.com/productdata/pds/http/httpfront"
	"github.com/productdata/pds/internal/metrics"
	"github.com/productdata/pds/mcp"
	"github.com/productdata/pds/service"
	"github.com/productdata/pds/service/keys"
	"github.com/productdata/pds/service/quota"
	"github.com/productdata/pds/snapshots"
	"github.com/productdata/pds/snapshots/fleet"
	"github.com/productdata/pds/snapshots/trust"
)

// serve is the 'pds serve' subcommand: Open loads the snapshot, keys and
// quota state and starts the listeners; Run answers signals and watches the
// snapshot pointer and keys file until ctx ends; Close drains and releases.
type serve struct {
	snapDir, keysFile, addr, adminAddr, origins, logLevel, usagePath string
	trustRoot, pubKeyPath, stale, searchCopyDir                      string
	trust                                                            snapshots.Verifier
	cacheMB, maxInFlight                                             int
	memoryLimit                                                      int64 // the cgroup's, read once at start; 0: none
	watch, drain, shutdownTimeout                                    time.Duration
	limits                                                           httpfront.Limits
	netHTTPOnly, noPoints, hashAll                                   bool
	res                                                              resolverFlags

	logOut  *logWriter
	log     *slog.Logger
	meter   *quota.Meter
	svc     *service.Service
	metrics *metrics.Metrics
	handler *pdshttp.Server
	ln      *httpfront.Listener
	// rhandler and rln serve the resolver on --resolver-addr, when set.
	rhandler *pdshttp.Server
	rln      *httpfront.Listener

	checks  chan struct{}     // asks the verifier to look at the pointer; holds at most one request
	refused string            // fingerprint of the last refused snapshot (verifier goroutine only)
	damaged *service.Snapshot // the served snapshot last said to be damaged (verifier goroutine only)
	fresh   freshness         // the trust's freshness last read (verifier goroutine only)
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	s := &serve{limits: httpfront.DefaultLimits}
	if err := s.parse(args, stderr); err != nil {
		return err
	}
	if err := s.Open(stderr); err != nil {
		s.Close()
		return err
	}
	s.Run(ctx)
	return s.Close()
}

func (s *serve) parse(args []string, stderr io.Writer) error {
	fs := newFlags("serve", "serve --snapshot SNAPSHOT_DIR --keys KEYS_FILE --addr HOST:PORT", stderr)
	fs.StringVar(&s.snapDir, "snapshot", "", "snapshot directory, or a symbolic link to one (a 'current' pointer that is watched)")
	fs.StringVar(&s.keysFile, "keys", "", "keys file written by 'pds keys add' (reread on SIGHUP and when it changes)")
	fs.StringVar(&s.addr, "addr", "127.0.0.1:8080", "listen address of the API and the /livez, /healthz, /readyz probes")
	fs.StringVar(&s.adminAddr, "admin-addr", "", "if set, serve /metrics and Go's /debug/pprof profiles on this (loopback) address")
	fs.StringVar(&s.adminAddr, "debug-addr", "", "old name of --admin-addr")
	fs.IntVar(&s.cacheMB, "cache-mb", 0, "block cache size in MiB (0: the store's size on disk, at least 256 and at most 1024, and at most a quarter of the memory cgroup's limit when there is one)")
	fs.StringVar(&s.origins, "allowed-origins", "", "comma-separated Origin values the MCP endpoint accepts besides loopback")
	fs.DurationVar(&s.watch, "watch", 2*time.Second, "how often to check the snapshot pointer and the keys file for a change (0: only on SIGHUP)")
	fs.StringVar(&s.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	fs.StringVar(&s.pubKeyPath, "pubkey", "", "minisign public key every snapshot must be signed with, at start and at every swap (see pds snapshot); with --trust-root, kept builds it signed before the fleet moved to the root")
	fs.StringVar(&s.trustRoot, "trust-root", "", "root of trust ('pds trust root'): serve only builds that the statements under it name, at start and at every swap (see docs/deploy.md)")
	fs.StringVar(&s.stale, "stale", "serve", "with --trust-root, what to do once the kept timestamp statement expires (the replica has not heard from its origin): 'serve' keeps answering and /readyz says stale; 'refuse' answers 503 until it is renewed")
	fs.StringVar(&s.usagePath, "usage", "", "file that keeps quota usage across restarts (default: the keys file + \".usage\")")
	fs.DurationVar(&s.drain, "drain", 0, "on SIGTERM or SIGINT, answer /readyz 503 for this long before closing the listener (let a load balancer notice)")
	fs.DurationVar(&s.shutdownTimeout, "shutdown-timeout", 20*time.Second, "then wait this long for requests in flight to finish")
	fs.IntVar(&s.limits.MaxConns, "max-conns", s.limits.MaxConns, "open connections at most; at the cap the idle one least recently used is closed for a new one, or with none idle the new one is answered 503 (see docs/serving.md)")
	fs.Float64Var(&s.limits.AddrShare, "max-conns-share", s.limits.AddrShare, "share of --max-conns one client address (IPv4 address, IPv6 /64) may hold, above 0 and at most 1 (1: no limit per address; see docs/serving.md)")
	fs.IntVar(&s.maxInFlight, "max-in-flight", pdshttp.DefaultMaxInFlight, "requests answered at once at most; more are answered 503 with Retry-After")
	fs.DurationVar(&s.limits.ReadHeaderTimeout, "read-header-timeout", s.limits.ReadHeaderTimeout, "time to read a request's headers; a new connection has it from its start, to send its first byte and head")
	fs.DurationVar(&s.limits.ReadTimeout, "read-timeout", s.limits.ReadTimeout, "time to read a whole request")
	fs.DurationVar(&s.limits.WriteTimeout, "write-timeout", s.limits.WriteTimeout, "time to answer a request")
	fs.DurationVar(&s.limits.IdleTimeout, "idle-timeout", s.limits.IdleTimeout, "time a keep-alive connection may stay idle after an answer")
	fs.BoolVar(&s.netHTTPOnly, "net-http-only", false, "answer every request with net/http, without the lane for plain GETs (see docs/design.md)")
	fs.BoolVar(&s.hashAll, "hash-all", false, "hash every file of the snapshot whole before serving it, instead of checking each 64 KiB as it is first read (see docs/snapshots.md)")
	fs.StringVar(&s.searchCopyDir, "search-copy-dir", "", "a folder on disk (not tmpfs) for the private copies of the search index's segments, which are otherwise kept in memory that cannot be paged out; for a server with less memory than the snapshot's search index (see docs/operating.md)")
	fs.BoolVar(&s.noPoints, "no-point-index", false, "do not map the snapshot's point index: read it with pread (format 4 and later, which keep identity views in it alone), or read identity views from the store (older formats); slower, and its pages are the page cache's, not the server's (see docs/design.md)")
	s.res.define(fs)
	if err := parseFlags(fs, args, "snapshot", "keys", "addr"); err != nil {
		return err
	}
	if err := s.res.check(); err != nil {
		return err
	}
	if !(s.limits.AddrShare > 0 && s.limits.AddrShare <= 1) {
		return fmt.Errorf("%w: --max-conns-share %v: want a share above 0 and at most 1", errUsage, s.limits.AddrShare)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(s.logLevel)); err != nil {
		return fmt.Errorf("%w: --log-level: %w", errUsage, err)
	}
	if s.usagePath == "" {
		s.usagePath = s.keysFile + ".usage"
	}
	if s.stale != "serve" && s.stale != "refuse" {
		return fmt.Errorf("%w: --stale %q: want serve or refuse", errUsage, s.stale)
	}
	var err error
	s.trust, err = trustFlags{root: &s.trustRoot, pubkey: &s.pubKeyPath}.verifier(snapsOf(s.snapDir), false)
	if err != nil {
		return err
	}
	if _, ok := s.trust.(*trust.Replica); !ok && s.stale == "refuse" {
		return fmt.Errorf("%w: --stale refuse needs a root of trust (--trust-root): without one there is no timestamp to expire", errUsage)
	}
	if s.searchCopyDir != "" {
		// Fail now, not when the index is opened in the background.
		f, err := os.CreateTemp(s.searchCopyDir, "pds-segment-*")
		if err != nil {
			return fmt.Errorf("%w: --search-copy-dir: %w", errUsage, err)
		}
		f.Close()
		os.Remove(f.Name())
	}
	s.memoryLimit, _ = memoryLimit()
	return nil
}

// Open loads everything and starts the listeners; /readyz is 503 until it
// returns.
func (s *serve) Open(stderr io.Writer) error {
	var level slog.Level
	level.UnmarshalText([]byte(s.logLevel))
	s.logOut = newLogWriter(stderr, 100*time.Millisecond)
	s.log = slog.New(newJSONLogHandler(s.logOut, level))

	snap, err := service.OpenSnapshot(s.snapDir, s.openOptions())
	if err != nil {
		return err
	}
	ks, err := keys.Load(s.keysFile)
	if err != nil {
		snap.Close()
		return err
	}
	if ks.Len() == 0 {
		s.log.Warn("the keys file holds no key; every call will be refused", "keys", s.keysFile)
	}
	if s.meter, err = quota.Open(s.usagePath, nil); err != nil {
		snap.Close()
		return err
	}
	s.svc = service.New(snap, ks, s.meter, s.log)
	meter := s.meter
	s.metrics = metrics.New(func() []metrics.TenantUsage {
		var out []metrics.TenantUsage
		for _, u := range meter.Tenants() {
			out = append(out, metrics.TenantUsage{Tenant: u.Tenant, Used: u.Used})
		}
		return out
	})
	s.reportSnapshot(snap)
	s.readFreshness()
	var allowed []string
	for _, o := range strings.Split(s.origins, ",") {
		if o = strings.TrimSpace(o); o != "" {
			allowed = append(allowed, o)
		}
	}
	opts := pdshttp.Options{Metrics: s.metrics, MaxInFlight: s.maxInFlight}
	res := s.res.handler(s.svc, s.meter, s.log)
	if res != nil && s.res.addr == "" {
		opts.Resolver = res // on the API's listener
	}
	s.handler = pdshttp.NewWithOptions(s.svc, s.log, mcp.NewWithMetrics(s.svc, s.log, allowed, s.metrics), opts)
	s.ln = &httpfront.Listener{Addr: s.addr, AdminAddr: s.adminAddr, Handler: s.handler, Metrics: s.metrics, Limits: s.limits, Log: s.log,
		NetHTTPOnly: s.netHTTPOnly}
	if err := s.ln.Open(); err != nil {
		s.ln = nil
		return err
	}
	resolverAddr := ""
	switch {
	case res != nil && s.res.addr != "":
		s.rhandler = pdshttp.NewWithOptions(s.svc, s.log, nil, pdshttp.Options{Metrics: s.metrics, MaxInFlight: s.maxInFlight, Resolver: res, ResolverOnly: true})
		s.rln = &httpfront.Listener{Addr: s.res.addr, Handler: s.rhandler, Metrics: s.metrics, Limits: s.limits, Log: s.log, NetHTTPOnly: s.netHTTPOnly}
		if err := s.rln.Open(); err != nil {
			s.rln = nil
			return fmt.Errorf("--resolver-addr: %w", err)
		}
		resolverAddr = strings.TrimPrefix(s.rln.URL(), "http://")
	case res != nil:
		resolverAddr = strings.TrimPrefix(s.ln.URL(), "http://")
	}
	attrs := []any{"addr", strings.TrimPrefix(s.ln.URL(), "http://"), "admin_addr", strings.TrimPrefix(s.ln.AdminURL(), "http://"),
		"snapshot", snap.Dir, "build_id", snap.Manifest.BuildID, "input_digest", snap.Manifest.InputDigest, "keys", ks.Len(),
		"verify_ms", snap.Verified.Milliseconds(), "open_ms", snap.Opened.Milliseconds(), "cache_mb", snap.CacheBytes >> 20, "point_index", snap.Points,
		"resolver_addr", resolverAddr}
	if n, ok := diskReadBytes(); ok {
		attrs = append(attrs, "disk_read_kb", n>>10)
	}
	if s.memoryLimit > 0 {
		attrs = append(attrs, "memory_limit_mb", s.memoryLimit>>20)
	}
	attrs = append(attrs, pointAttrs(snap.Snapshot, s.searchCopyDir)...)
	s.log.Info("serving", attrs...)
	// Ready: only now is the search index hashed, so the start reads no
	// more than answers need.
	go s.reportIndex(snap, time.Now())
	return nil
}

// reportIndex starts the check of snap's search index in the background
// and logs when the index is open, or why it is not: until then a search
// waits for it.
func (s *serve) reportIndex(snap *service.Snapshot, since time.Time) {
	err := snap.WaitIndex(context.Background())
	switch {
	case err == nil:
		s.log.Info("search index ready", "build_id", snap.Manifest.BuildID, "took_ms", time.Since(since).Milliseconds())
	case errors.Is(err, snapshots.ErrClosed):
	default:
		s.log.Error("search index not opened; searches fail", "build_id", snap.Manifest.BuildID, "error", err.Error())
	}
}

func (s *serve) openOptions() snapshots.OpenOptions {
	o := snapshots.OpenOptions{CacheBytes: int64(s.cacheMB) << 20, Verifier: s.trust, NoPoints: s.noPoints, HashAll: s.hashAll,
		SearchCopyDir: s.searchCopyDir}
	if s.memoryLimit > 0 {
		// A quarter of the cgroup's limit: the rest is the server's own
		// memory (search index offsets, connections) and the page cache
		// the snapshot's other reads go through, which the limit counts.
		o.MaxAutoCacheBytes = max(s.memoryLimit/4, 16<<20)
		o.MemoryLimit = s.memoryLimit
	}
	return o
}

func (s *serve) reportSnapshot(snap *service.Snapshot) {
	created, _ := time.Parse(time.RFC3339, snap.Manifest.CreatedAt)
	s.metrics.Snapshot(snap.Manifest.BuildID, created, snap.Manifest.FormatVersion)
}

// Run serves until ctx ends or a listener fails. Snapshot checks run on
// their own goroutine, so a long verification never delays a key reload or
// a signal; requests for a check made while one runs coalesce into one.
func (s *serve) Run(ctx context.Context) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	s.checks = make(chan struct{}, 1)
	vctx, stopVerifier := context.WithCancel(context.Background())
	verifierDone := make(chan struct{})
	go func() { defer close(verifierDone); s.verifier(vctx) }()
	defer func() { stopVerifier(); <-verifierDone }()

	keyWatch := keys.NewWatcher(s.keysFile)
	flushTick := time.NewTicker(time.Second)
	defer flushTick.Stop()
	var tick <-chan time.Time
	if s.watch > 0 {
		t := time.NewTicker(s.watch)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-hup:
			s.reloadKeys("SIGHUP")
			s.askCheck()
		case <-flushTick.C:
			s.flushUsage()
		case <-tick:
			if keyWatch.Changed() {
				s.reloadKeys("file changed")
			}
			s.askCheck()
		case err := <-s.ln.Err():
			s.log.Error("listener stopped", "error", fmt.Sprint(err))
			return
		case err := <-s.resolverErr():
			s.log.Error("resolver listener stopped", "error", fmt.Sprint(err))
			return
		case <-ctx.Done():
			return
		}
	}
}

// resolverErr receives an error when the resolver's own listener stops; nil
// (never ready) when it has none.
func (s *serve) resolverErr() <-chan error {
	if s.rln == nil {
		return nil
	}
	return s.rln.Err()
}

func (s *serve) askCheck() {
	select {
	case s.checks <- struct{}{}:
	default: // one is already asked for: it will see the newest pointer
	}
}

func (s *serve) verifier(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.checks:
			s.swapIfChanged()
			s.readFreshness()
		}
	}
}

func (s *serve) reloadKeys(reason string) {
	next, err := keys.Load(s.keysFile)
	if err != nil {
		s.metrics.KeysReloaded(false)
		s.log.Error("keys not reloaded; the previous keys stay in force", "error", err.Error())
		return
	}
	s.svc.SetKeys(next)
	s.metrics.KeysReloaded(true)
	s.log.Info("keys reloaded", "keys", next.Len(), "reason", reason)
}

func (s *serve) flushUsage() {
	if err := s.meter.Flush(); err != nil {
		s.log.Error("quota usage not saved", "usage", s.usagePath, "error", err.Error())
	}
}

// swapIfChanged opens the snapshot the pointer names now and swaps to it
// when it differs from the one served, or when a file of the one served
// changed or is damaged (then the same folder is opened again, every file
// hashed whole, so that a repaired build comes back without a restart). A
// snapshot that was refused is remembered by its fingerprint and not
// verified again until it changes.
func (s *serve) swapIfChanged() {
	target, err := filepath.EvalSymlinks(s.snapDir)
	if err != nil {
		s.metrics.SwapRefused("unreadable_pointer")
		s.log.Error("snapshot pointer unreadable; still serving the current snapshot", "snapshot", s.snapDir, "error", err.Error())
		return
	}
	opts := s.openOptions()
	if cur := s.svc.Current(); cur != nil {
		damage := cur.Check()
		if damage != nil && s.damaged != cur {
			s.damaged = cur
			s.metrics.SwapRefused("damaged")
			s.log.Error("snapshot damaged; answering 503 until a good snapshot is in place", "snapshot", cur.Dir, "error", damage.Error())
		}
		if cur.Dir == target && damage == nil {
			return
		}
		opts.HashAll = damage != nil
	}
	fp, err := snapshots.Fingerprint(target)
	if err == nil && fp == s.refused {
		return // refused before and unchanged since: said once already
	}
	next, err := service.OpenSnapshot(target, opts)
	if err != nil {
		s.refused = fp
		s.metrics.SwapRefused("verify_failed")
		s.log.Error("new snapshot refused; still serving the current one", "snapshot", target, "error", err.Error())
		return
	}
	s.svc.Swap(next)
	go s.reportIndex(next, time.Now())
	s.metrics.Swapped()
	a, ok := fleet.ArrivalOf(next.Dir)
	if !ok {
		a.Via = "unknown"
	}
	s.metrics.Updated(a.Via, a.Bytes)
	s.reportSnapshot(next)
	attrs := []any{"snapshot", next.Dir, "build_id", next.Manifest.BuildID, "verify_ms", next.Verified.Milliseconds(), "open_ms", next.Opened.Milliseconds(), "cache_mb", next.CacheBytes >> 20, "point_index", next.Points,
		"via", a.Via, "bytes_fetched", a.Bytes}
	s.log.Info("snapshot swapped", append(attrs, pointAttrs(next.Snapshot, s.searchCopyDir)...)...)
}

// pointAttrs are the log attributes of how snap's identity views and search
// copies are read, where they are not the plainest: the point index's layers,
// its pages read one at a time, the search copies in a folder.
func pointAttrs(snap *snapshots.Snapshot, searchCopyDir string) []any {
	var attrs []any
	if snap.PointLayers > 0 {
		attrs = append(attrs, "point_index_layers", snap.PointLayers)
	}
	if snap.PointsRandom {
		attrs = append(attrs, "point_index_random", true)
	}
	if searchCopyDir != "" {
		attrs = append(attrs, "search_copy_dir", searchCopyDir)
	}
	return attrs
}

// Close drains: /readyz turns 503, the drain period passes, the listener
// stops and waits for requests in flight up to the shutdown timeout; then
// quota usage and logs are flushed and the snapshot closed. It returns an
// error only when requests had to be dropped.
func (s *serve) Close() error {
	var err error
	if s.ln != nil {
		s.handler.SetState(pdshttp.Draining)
		if s.rhandler != nil {
			s.rhandler.SetState(pdshttp.Draining)
		}
		s.log.Info("draining", "drain", s.drain.String())
		time.Sleep(s.drain)
		ctx, cancel := context.WithTimeout(context.Background(), s.shutdownTimeout)
		if s.rln != nil {
			if rerr := s.rln.Close(ctx); rerr != nil {
				err = fmt.Errorf("resolver requests still in flight after %s were dropped: %w", s.shutdownTimeout, rerr)
			}
		}
		if lerr := s.ln.Close(ctx); lerr != nil {
			err = fmt.Errorf("requests still in flight after %s were dropped: %w", s.shutdownTimeout, lerr)
		}
		cancel()
		s.log.Info("stopped")
	}
	if s.meter != nil {
		s.flushUsage()
	}
	if s.svc != nil {
		s.svc.Close()
	}
	if s.logOut != nil {
		s.logOut.Close()
	}
	return err
}

// diskReadBytes is what this process has read from storage so far (its
// page-cache misses, the executable's own pages included): read_bytes of
// /proc/self/io, which only Linux has. A start that reads this much from a
// cold cache reads it from disk whatever the snapshot's size.
func diskReadBytes() (int64, bool) {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "read_bytes:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}
