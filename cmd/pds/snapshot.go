package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/productdata/pds/snapshots"
	"github.com/productdata/pds/snapshots/fleet"
	"github.com/productdata/pds/snapshots/trust"
)

// snapshotSynopsis is each subcommand of 'pds snapshot' and its synopsis,
// in the order -h lists them.
var snapshotSynopsis = [][2]string{
	{"keygen", "snapshot keygen --pub FILE --key FILE"},
	{"sign", "snapshot sign --key FILE SNAPSHOT_DIR"},
	{"verify", "snapshot verify (--trust-root FILE | --pubkey FILE) SNAPSHOT_DIR"},
	{"publish", "snapshot publish [--key FILE [--timestamp-key FILE] [--valid 48h]] [--pubkey FILE] [--deltas-from DIR [--deltas 7]] [--endpoint URL --region R] [--allow-downgrade] SNAPSHOT_DIR ORIGIN"},
	{"pull", "snapshot pull ORIGIN --into SNAPSHOTS_DIR (--trust-root FILE | --pubkey FILE) [--keep 3] [--no-delta] [--allow-downgrade] [--lock-wait 10m] [--endpoint URL --region R]"},
	{"follow", "snapshot follow ORIGIN --snapshots SNAPSHOTS_DIR (--trust-root FILE | --pubkey FILE) [--every 30s] [--keep 3] [--no-delta] [--endpoint URL --region R]"},
	{"bundle", "snapshot bundle --from BUILD_DIR --to BUILD_DIR --out FILE [--key FILE --roots DIR [--timestamp-key FILE] [--valid 720h] [--legacy-key MINISIGN_SECRET_KEY]]"},
	{"apply", "snapshot apply FILE --into SNAPSHOTS_DIR (--trust-root FILE | --pubkey FILE) [--keep 3] [--allow-downgrade] [--lock-wait 10m]"},
	{"rollback", "snapshot rollback [--trust-root FILE | --pubkey FILE] [--lock-wait 10m] SNAPSHOTS_DIR [BUILD_ID]"},
	{"timestamp", "snapshot timestamp --key FILE [--valid 48h] [--endpoint URL --region R] ORIGIN"},
}

func synopsis(name string) string {
	for _, c := range snapshotSynopsis {
		if c[0] == name {
			return c[1]
		}
	}
	return ""
}

func runSnapshot(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	run := map[string]func(context.Context, []string, io.Writer, io.Writer) error{
		"keygen": runSnapshotKeygen, "sign": runSnapshotSign, "verify": runSnapshotVerify, "publish": runSnapshotPublish,
		"pull": runSnapshotPull, "follow": runSnapshotFollow, "rollback": runSnapshotRollback,
		"bundle": runSnapshotBundle, "apply": runSnapshotApply, "timestamp": runSnapshotTimestamp,
	}
	if len(args) > 0 && run[args[0]] != nil {
		return run[args[0]](ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
		for _, c := range snapshotSynopsis {
			fmt.Fprintf(stdout, "usage: pds %s\n", c[1])
		}
		return nil
	}
	names := make([]string, len(snapshotSynopsis))
	for i, c := range snapshotSynopsis {
		names[i] = c[0]
	}
	return fmt.Errorf("%w: pds snapshot takes a subcommand: %s (pds snapshot -h)", errUsage, strings.Join(names, ", "))
}

// parseWithArgs parses flags placed before, between or after the
// positional arguments, and checks their count (min to max; want says
// which they are) and the required flags, like parseFlags.
func parseWithArgs(fs *flag.FlagSet, args []string, want string, min, max int, required ...string) ([]string, error) {
	pos, err := parseInterleaved(fs, args, required...)
	if err != nil {
		return nil, err
	}
	if len(pos) < min || len(pos) > max {
		return nil, fmt.Errorf("%w: %s takes %s (and flags; see -h)", errUsage, strings.TrimPrefix(fs.Name(), "snapshot "), want)
	}
	return pos, nil
}

func runSnapshotKeygen(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("snapshot keygen", synopsis("keygen"), stderr)
	pubPath := fs.String("pub", "", "public key file to write (give it to every replica)")
	secPath := fs.String("key", "", "secret key file to write, mode 0600, unencrypted (keep it on the build host)")
	if _, err := parseWithArgs(fs, args, "no arguments", 0, 0, "pub", "key"); err != nil {
		return err
	}
	pub, err := snapshots.GenerateKey(*pubPath, *secPath)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "key %s: public key %s, secret key %s\n", pub.ID(), *pubPath, *secPath)
	return nil
}

func runSnapshotSign(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("snapshot sign", synopsis("sign"), stderr)
	keyPath := fs.String("key", "", "minisign secret key (an encrypted one takes its password from PDS_SIGNING_PASSWORD)")
	pos, err := parseWithArgs(fs, args, "SNAPSHOT_DIR", 1, 1, "key")
	if err != nil {
		return err
	}
	k, err := snapshots.ReadPrivateKey(*keyPath, os.Getenv("PDS_SIGNING_PASSWORD"))
	if err != nil {
		return err
	}
	m, err := snapshots.Verify(pos[0])
	if err != nil {
		return err
	}
	if err := snapshots.Sign(pos[0], k); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "signed build %s (sequence %d) with key %s: %s/%s\n", m.BuildID, m.Sequence, k.ID(), pos[0], snapshots.SignatureName)
	return nil
}

func runSnapshotVerify(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("snapshot verify", synopsis("verify"), stderr)
	tf := addTrustFlags(fs, "accept")
	pos, err := parseWithArgs(fs, args, "SNAPSHOT_DIR", 1, 1)
	if err != nil {
		return err
	}
	v, err := tf.verifier(snapsOf(pos[0]), true)
	if err != nil {
		return err
	}
	m, err := snapshots.VerifySigned(pos[0], v)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "build %s (sequence %d) vouched for by the %s; %d files match the manifest\n", m.BuildID, m.Sequence, describeTrust(v), len(m.Files))
	return nil
}

// originFlags are the flags every command that reaches an origin takes.
func originFlags(fs *flag.FlagSet) *fleet.S3Config {
	c := &fleet.S3Config{}
	fs.StringVar(&c.Endpoint, "endpoint", "", "S3 endpoint for s3:// origins: http(s)://HOST[:PORT] or a host (default: AWS S3); credentials from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or ~/.aws/credentials")
	fs.StringVar(&c.Region, "region", "", "S3 region (default: found by the client)")
	return c
}

func optionalKey(path string) (*snapshots.PublicKey, error) {
	if path == "" {
		return nil, nil
	}
	return snapshots.ReadPublicKey(path)
}

func runSnapshotPublish(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("snapshot publish", synopsis("publish"), stderr)
	pubPath := fs.String("pubkey", "", "if set, check the signature with this public key before uploading")
	allow := fs.Bool("allow-downgrade", false, "publish even when the origin's latest build has a higher sequence")
	deltasFrom := fs.String("deltas-from", "", "a folder of earlier builds (one per subfolder, such as a pull's folder): store a delta from the newest of them to this build beside it")
	deltas := fs.Int("deltas", fleet.DefaultDeltas, "with --deltas-from: how many of the newest earlier builds to make deltas from")
	tsign := addSigningFlags(fs, 48*time.Hour)
	s3 := originFlags(fs)
	pos, err := parseWithArgs(fs, args, "SNAPSHOT_DIR ORIGIN", 2, 2)
	if err != nil {
		return err
	}
	if *deltas < 0 {
		return fmt.Errorf("%w: --deltas must be 0 or more", errUsage)
	}
	pt, err := tsign.publishTrust()
	if err != nil {
		return err
	}
	pub, err := optionalKey(*pubPath)
	if err != nil {
		return err
	}
	var from []string
	if *deltasFrom != "" {
		m, err := snapshots.ReadManifest(pos[0])
		if err != nil {
			return err
		}
		var skipped []string
		if from, skipped, err = fleet.DeltaBases(*deltasFrom, m, *deltas); err != nil {
			return fmt.Errorf("--deltas-from: %v", err)
		}
		for _, s := range skipped {
			fmt.Fprintf(stderr, "publish: --deltas-from: not used, so no delta from it: %s\n", s)
		}
		if len(from) == 0 && *deltas > 0 {
			fmt.Fprintf(stderr, "publish: --deltas-from: %s holds no usable build older than build %s (sequence %d); no delta is made\n", *deltasFrom, m.BuildID, m.Sequence)
		}
	}
	o, err := fleet.OpenOrigin(pos[1], *s3)
	if err != nil {
		return err
	}
	start := time.Now()
	opts := fleet.PublishOptions{AllowDowngrade: *allow, Progress: stderr, DeltasFrom: from, Trust: pt}
	if pub != nil {
		opts.Verifier = pub
	}
	p, err := fleet.Publish(ctx, pos[0], o, opts)
	if err != nil {
		return err
	}
	var deltaBytes int64
	for _, d := range p.Deltas {
		deltaBytes += d.Bytes
	}
	fmt.Fprintf(stdout, "published build %s (sequence %d): %d files, %d bytes, and %d deltas from earlier builds, %d bytes, to %s in %s; %s/%s names it\n",
		p.BuildID, p.Sequence, p.Files, p.Bytes, len(p.Deltas), deltaBytes, o, time.Since(start).Round(time.Millisecond), o, fleet.LatestName)
	return nil
}

func runSnapshotPull(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("snapshot pull", synopsis("pull"), stderr)
	into := fs.String("into", "", "snapshots directory: builds go to DIR/<build_id>, DIR/current points at the one to serve")
	tf := addTrustFlags(fs, "take")
	keep := fs.Int("keep", 3, "builds to keep, the current one included (at least 2: a server may still read the previous one until it swaps)")
	allow := fs.Bool("allow-downgrade", false, "take the origin's latest build even when it is older than the current one")
	noDelta := noDeltaFlag(fs)
	lockWait := lockWaitFlag(fs)
	s3 := originFlags(fs)
	pos, err := parseWithArgs(fs, args, "ORIGIN", 1, 1, "into")
	if err != nil {
		return err
	}
	pub, err := tf.verifier(*into, true)
	if err != nil {
		return err
	}
	o, err := fleet.OpenOrigin(pos[0], *s3)
	if err != nil {
		return err
	}
	start := time.Now()
	p, err := fleet.Pull(ctx, o, *into, fleet.PullOptions{Verifier: pub, AllowDowngrade: *allow, Keep: *keep, LockWait: *lockWait, Progress: stderr, NoDelta: *noDelta})
	if err != nil {
		return err
	}
	return reportTaken(stdout, p, *into, " from "+o.String(),
		fmt.Sprintf(", %d bytes pulled in %d objects, %d reused from an interrupted pull", p.Downloaded, p.Objects, p.Reused), start)
}

// reportTaken prints what a pull or an apply made current in into: from
// says where the build came from in the line for one already current, and
// detail what follows how it came.
func reportTaken(stdout io.Writer, p fleet.Pulled, into, from, detail string, start time.Time) error {
	if p.UpToDate {
		fmt.Fprintf(stdout, "build %s%s is already current in %s\n", p.ID, from, into)
		return nil
	}
	if p.PruneErr != nil {
		return fmt.Errorf("build %s is current in %s, but old builds were not pruned: %v", p.ID, into, p.PruneErr)
	}
	fmt.Fprintf(stdout, "build %s (sequence %d) is current in %s: %s%s, in %s; %d old builds removed\n",
		p.ID, p.Manifest.Sequence, into, arrival(p), detail, time.Since(start).Round(time.Millisecond), len(p.Removed))
	return nil
}

// arrival says how a build came.
func arrival(p fleet.Pulled) string {
	switch {
	case p.Via == fleet.ViaDelta:
		return "by delta from build " + p.DeltaBase
	case p.DeltaErr != nil:
		return fmt.Sprintf("whole, after the delta failed (%v)", p.DeltaErr)
	case p.Via == fleet.ViaFull:
		return "whole"
	}
	return "kept from an earlier pull"
}

func noDeltaFlag(fs *flag.FlagSet) *bool {
	return fs.Bool("no-delta", false, "fetch a new build whole, even where the origin holds a delta to it from a build kept here")
}

func runSnapshotBundle(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("snapshot bundle", synopsis("bundle"), stderr)
	from := fs.String("from", "", "the build the site keeps (a build folder)")
	to := fs.String("to", "", "the signed build to bring it to (a build folder)")
	out := fs.String("out", "", "the bundle file to write")
	tsign := addSigningFlags(fs, 30*24*time.Hour)
	roots := fs.String("roots", "", "with --key: the folder holding the chain of roots (1.root.json, 2.root.json, ...) the bundle carries")
	legacy := fs.String("legacy-key", "", "with --key: the minisign secret key the site trusts today; the bundle carries its signature of root version 1, so the site adopts the root")
	if _, err := parseWithArgs(fs, args, "only its flags", 0, 0, "from", "to", "out"); err != nil {
		return err
	}
	bt, err := tsign.bundleTrust(*roots)
	if err != nil {
		return err
	}
	if *legacy != "" {
		if bt == nil {
			return fmt.Errorf("%w: --legacy-key needs --key", errUsage)
		}
		k, err := snapshots.ReadPrivateKey(*legacy, os.Getenv("PDS_SIGNING_PASSWORD"))
		if err != nil {
			return err
		}
		if bt.LegacySig, err = snapshots.SignBytes(bt.Roots[0], k, "file:"+trust.AdoptedName); err != nil {
			return err
		}
	}
	start := time.Now()
	st, err := fleet.WriteBundle(ctx, *from, *to, *out, bt)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s: build %s to %s, %d bytes (%d files the same as in the kept build, %d patched, %d whole) in %s\n",
		*out, st.Base, st.Target, st.Bytes, st.Same, st.Patched, st.Whole, time.Since(start).Round(time.Millisecond))
	return nil
}

func runSnapshotApply(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("snapshot apply", synopsis("apply"), stderr)
	into := fs.String("into", "", "snapshots directory that keeps the build the bundle starts from")
	tf := addTrustFlags(fs, "take")
	keep := fs.Int("keep", 3, "builds to keep, the current one included (at least 2: a server may still read the previous one until it swaps)")
	allow := fs.Bool("allow-downgrade", false, "take the bundle's build even when it is older than the current one")
	lockWait := lockWaitFlag(fs)
	pos, err := parseWithArgs(fs, args, "FILE", 1, 1, "into")
	if err != nil {
		return err
	}
	pub, err := tf.verifier(*into, true)
	if err != nil {
		return err
	}
	start := time.Now()
	p, err := fleet.ApplyBundle(ctx, pos[0], *into, fleet.PullOptions{Verifier: pub, AllowDowngrade: *allow, Keep: *keep, LockWait: *lockWait, Progress: stderr})
	if err != nil {
		return err
	}
	return reportTaken(stdout, p, *into, "", "", start)
}

// lockWaitFlag is the flag of the commands that wait for a snapshots
// directory's lock.
func lockWaitFlag(fs *flag.FlagSet) *time.Duration {
	return fs.Duration("lock-wait", 10*time.Minute, "how long to wait while another pull, follow or rollback works in the snapshots directory (0: fail at once)")
}

func runSnapshotFollow(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("snapshot follow", synopsis("follow"), stderr)
	dir := fs.String("snapshots", "", "snapshots directory; serve it with pds serve --snapshot DIR/current")
	tf := addTrustFlags(fs, "take")
	every := fs.Duration("every", 30*time.Second, "how often to poll the origin")
	keep := fs.Int("keep", 3, "builds to keep, the current one included (at least 2: a server may still read the previous one until it swaps)")
	allow := fs.Bool("allow-downgrade", false, "take the origin's latest build even when it is older than the current one")
	noDelta := noDeltaFlag(fs)
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn, error")
	s3 := originFlags(fs)
	pos, err := parseWithArgs(fs, args, "ORIGIN", 1, 1, "snapshots")
	if err != nil {
		return err
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("%w: --log-level: %w", errUsage, err)
	}
	if *every <= 0 {
		return fmt.Errorf("%w: --every must be positive", errUsage)
	}
	pub, err := tf.verifier(*dir, true)
	if err != nil {
		return err
	}
	o, err := fleet.OpenOrigin(pos[0], *s3)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: level}))
	f := &fleet.Follower{Origin: o, Snapshots: *dir, Log: log,
		Pull: fleet.PullOptions{Verifier: pub, AllowDowngrade: *allow, Keep: *keep, NoDelta: *noDelta}}
	log.Info("following", "origin", o.String(), "snapshots", *dir, "every", every.String(), "keep", *keep, "trust", describeTrust(pub))
	f.Run(ctx, *every)
	return nil
}

func runSnapshotRollback(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("snapshot rollback", synopsis("rollback"), stderr)
	tf := addTrustFlags(fs, "if set, roll to")
	lockWait := lockWaitFlag(fs)
	pos, err := parseWithArgs(fs, args, "SNAPSHOTS_DIR [BUILD_ID]", 1, 2)
	if err != nil {
		return err
	}
	pub, err := tf.verifier(pos[0], false)
	if err != nil {
		return err
	}
	id := ""
	if len(pos) == 2 {
		id = pos[1]
	}
	r, err := fleet.Rollback(ctx, pos[0], id, fleet.RollbackOptions{Verifier: pub, LockWait: *lockWait, Progress: stderr})
	for _, s := range r.Skipped {
		fmt.Fprintf(stderr, "skipped build %s: %s\n", s.ID, s.Reason)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "current is now build %s (sequence %d), was %s (sequence %d)\n", r.To.ID, r.To.Manifest.Sequence, r.From.ID, r.From.Manifest.Sequence)
	if r.Listed {
		fmt.Fprintf(stdout, "build %s is listed in %s: no pull or follower takes it again (remove the line to allow it)\n", r.From.ID, filepath.Join(pos[0], fleet.RefusedName))
	}
	return nil
}
