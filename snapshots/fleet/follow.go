package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"
)

// Follower keeps a snapshots directory on the origin's latest build: every
// poll it does what Pull does when latest names a new build (fetch, open it
// with the code pds serve uses and read it as serving does, only then point
// current at it, which pds serve --snapshot SNAPSHOTS/current picks up, then
// prune old builds). On any failure current
// is left alone, the reason is logged and counted. A build refused for its
// own bytes (ErrRefused) is remembered and not fetched again; any other
// failure (the network, a full disk, this host short of file descriptors or
// memory: see hostFault) is tried again sooner than the next poll, after a
// delay that doubles with each failure in a row up to the poll interval
// (retryDelay). A poll that finds the directory locked by another pull or
// a rollback does nothing and says so; it is tried again the same way.
type Follower struct {
	Origin    Origin
	Snapshots string
	// Pull configures each pull; Pull.Keep is how many builds stay on
	// disk, the current one included.
	Pull PullOptions
	// Log gets one line per event; Stats counts them.
	Log   *slog.Logger
	Stats Stats
	// refused remembers builds refused for a reason a retry will not
	// change, so that they are not fetched again every poll.
	refused map[string]string
	// failures counts the polls in a row that failed for a reason a retry
	// may change; every is Run's poll interval.
	failures int
	every    time.Duration
}

// firstRetry is how long a follower waits to try again after a poll failed
// for a reason a retry may change; each further failure in a row doubles
// it, up to the poll interval.
const firstRetry = 2 * time.Second

// retryDelay is the wait before the next poll after failures failed polls
// in a row (none: the poll interval every).
func retryDelay(failures int, every time.Duration) time.Duration {
	if failures <= 0 {
		return every
	}
	d := firstRetry
	for i := 1; i < failures && d < every; i++ {
		d *= 2
	}
	return min(d, every)
}

// Stats counts what a Follower did.
type Stats struct {
	Polls, Swaps, Refused, Failed, BytesPulled atomic.Int64
	// SwapsByDelta counts the swaps to a build that came as a delta, and
	// BytesByDelta the bytes those fetched (also in BytesPulled).
	SwapsByDelta, BytesByDelta atomic.Int64
	// DeltasFailed counts deltas that were tried and failed (the build then
	// came whole).
	DeltasFailed atomic.Int64
}

// LogValue puts the counters in a log line.
func (s *Stats) LogValue() slog.Value {
	return slog.GroupValue(slog.Int64("polls", s.Polls.Load()), slog.Int64("swaps", s.Swaps.Load()),
		slog.Int64("refused", s.Refused.Load()), slog.Int64("failed", s.Failed.Load()),
		slog.Int64("bytes_pulled", s.BytesPulled.Load()), slog.Int64("swaps_by_delta", s.SwapsByDelta.Load()),
		slog.Int64("bytes_by_delta", s.BytesByDelta.Load()), slog.Int64("deltas_failed", s.DeltasFailed.Load()))
}

// Run polls every interval (and once at once) until ctx ends, then logs a
// summary. After a poll that failed for a reason a retry may change, the
// next comes sooner (retryDelay).
func (f *Follower) Run(ctx context.Context, every time.Duration) {
	f.every = every
	t := time.NewTimer(every)
	defer t.Stop()
	for {
		f.Poll(ctx)
		t.Reset(retryDelay(f.failures, every))
		select {
		case <-ctx.Done():
			f.Log.Info("follower stopped", "origin", f.Origin.String(), "stats", &f.Stats)
			return
		case <-t.C:
		}
	}
}

// Poll does one round: fetch, self-test, swap, prune. It returns the build
// made current, "" when nothing changed.
func (f *Follower) Poll(ctx context.Context) (string, error) {
	f.Stats.Polls.Add(1)
	if f.refused == nil {
		f.refused = map[string]string{}
	}
	o := &countingOrigin{Origin: f.Origin}
	if err := adoptedTrust(f.Snapshots, &f.Pull); err != nil {
		return "", f.fail("", err)
	}
	id, rel, err := latestBuild(ctx, o, &f.Pull)
	if err != nil {
		return "", f.fail("", err)
	}
	if reason, ok := f.refused[id]; ok {
		f.failures = 0
		f.Log.Debug("latest build was refused before; skipped", "build_id", id, "reason", reason)
		return "", nil
	}
	p, err := pullBuild(ctx, o, f.Snapshots, id, rel, f.Pull, true)
	if adopted, aerr := adoptOnRefusal(ctx, o, f.Snapshots, &f.Pull, err); aerr != nil {
		err = fmt.Errorf("%w; and the origin's root could not be adopted: %w", err, aerr)
	} else if adopted {
		f.Log.Info("adopted the origin's root of trust, signed by the key trusted so far; builds are taken through it from now on", "origin", f.Origin.String())
		if id, rel, err = latestBuild(ctx, o, &f.Pull); err != nil {
			return "", f.fail("", err)
		}
		p, err = pullBuild(ctx, o, f.Snapshots, id, rel, f.Pull, true)
	}
	f.Stats.BytesPulled.Add(p.Downloaded)
	if p.DeltaErr != nil {
		f.Stats.DeltasFailed.Add(1)
		f.Log.Warn("the delta failed; the build was fetched whole", "build_id", id, "error", p.DeltaErr.Error())
	}
	if err != nil {
		return "", f.fail(p.ID, err)
	}
	f.failures = 0
	if p.UpToDate {
		return "", nil
	}
	f.Stats.Swaps.Add(1)
	if p.Via == ViaDelta {
		f.Stats.SwapsByDelta.Add(1)
		f.Stats.BytesByDelta.Add(p.Downloaded)
	}
	f.Log.Info("new build is current", "build_id", p.ID, "sequence", p.Manifest.Sequence, "via", p.Via, "delta_from", p.DeltaBase,
		"bytes_pulled", p.Downloaded, "bytes_reused", p.Reused, "objects", o.n.Load(), "stats", &f.Stats)
	if p.PruneErr != nil {
		f.Log.Warn("old builds not pruned", "error", p.PruneErr.Error())
	} else if len(p.Removed) > 0 {
		f.Log.Info("old builds removed", "build_ids", p.Removed, "keep", max(f.Pull.Keep, MinKeep))
	}
	return p.ID, nil
}

// fail logs and counts a failed poll; current is untouched.
func (f *Follower) fail(id string, err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	if errors.Is(err, ErrRefused) {
		f.failures = 0
		f.Stats.Refused.Add(1)
		if id != "" {
			f.refused[id] = err.Error()
		}
		f.Log.Error("build refused; still serving the current one", "build_id", id, "error", err.Error(), "stats", &f.Stats)
		return err
	}
	f.failures++
	f.Stats.Failed.Add(1)
	attrs := []any{"build_id", id, "error", err.Error()}
	if f.every > 0 {
		attrs = append(attrs, "retry_in", retryDelay(f.failures, f.every).String())
	}
	f.Log.Warn("pull failed; still serving the current one, will retry", append(attrs, "stats", &f.Stats)...)
	return err
}
