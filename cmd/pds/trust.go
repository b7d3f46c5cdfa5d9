package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/theupdateframework/go-tuf/v2/metadata"

	"github.com/productdata/pds/snapshots"
	"github.com/productdata/pds/snapshots/fleet"
	"github.com/productdata/pds/snapshots/trust"
)

// trustSynopsis is each subcommand of 'pds trust' and its synopsis.
var trustSynopsis = [][2]string{
	{"keygen", "trust keygen --key FILE --pub FILE"},
	{"root", "trust root --deployment NAME --root-key PUB [--root-key PUB ...] --threshold K --build-key PUB --timestamp-key PUB [--expires 8760h] [--previous ROOT] --out FILE"},
	{"sign", "trust sign --key FILE ROOT_FILE"},
	{"show", "trust show ROOT_FILE"},
	{"publish-root", "trust publish-root [--key BUILD_KEY [--timestamp-key FILE] [--valid 48h]] [--legacy-key MINISIGN_SECRET_KEY] [--endpoint URL --region R] ROOT_FILE ORIGIN"},
}

func trustUsage(name string) string {
	for _, c := range trustSynopsis {
		if c[0] == name {
			return c[1]
		}
	}
	return ""
}

func runTrust(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	run := map[string]func(context.Context, []string, io.Writer, io.Writer) error{
		"keygen": runTrustKeygen, "root": runTrustRoot, "sign": runTrustSign, "show": runTrustShow, "publish-root": runTrustPublishRoot,
	}
	if len(args) > 0 && run[args[0]] != nil {
		return run[args[0]](ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
		for _, c := range trustSynopsis {
			fmt.Fprintf(stdout, "usage: pds %s\n", c[1])
		}
		return nil
	}
	names := make([]string, len(trustSynopsis))
	for i, c := range trustSynopsis {
		names[i] = c[0]
	}
	return fmt.Errorf("%w: pds trust takes a subcommand: %s (pds trust -h)", errUsage, strings.Join(names, ", "))
}

func runTrustKeygen(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("trust keygen", trustUsage("keygen"), stderr)
	keyPath := fs.String("key", "", "secret key file to write (PKCS #8 PEM, mode 0600)")
	pubPath := fs.String("pub", "", "public key file to write (TUF key JSON)")
	if _, err := parseWithArgs(fs, args, "no arguments", 0, 0, "key", "pub"); err != nil {
		return err
	}
	id, err := trust.GenerateKey(*keyPath, *pubPath)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "key %s: public key %s, secret key %s\n", id, *pubPath, *keyPath)
	return nil
}

// pathsFlag is a flag given once per value.
type pathsFlag []string

func (p *pathsFlag) String() string     { return strings.Join(*p, ",") }
func (p *pathsFlag) Set(v string) error { *p = append(*p, v); return nil }

func readKeys(paths []string) ([]*metadata.Key, error) {
	var keys []*metadata.Key
	for _, p := range paths {
		k, err := trust.ReadKey(p)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	return keys, nil
}

func runTrustRoot(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("trust root", trustUsage("root"), stderr)
	var rootKeys, buildKeys, tsKeys pathsFlag
	fs.Var(&rootKeys, "root-key", "public key that may sign roots (once per key; keep the secret keys offline)")
	fs.Var(&buildKeys, "build-key", "public key that may sign builds (the build host's; once per key)")
	fs.Var(&tsKeys, "timestamp-key", "public key that may sign timestamps (once per key; may be the build key)")
	threshold := fs.Int("threshold", 0, "how many root keys must sign a root")
	dep := fs.String("deployment", "", "the fleet's name; a build for another deployment is refused")
	expires := fs.Duration("expires", 365*24*time.Hour, "how long the root holds; make the next one before then")
	previous := fs.String("previous", "", "the root this one follows (its version is the previous one's plus one)")
	out := fs.String("out", "", "the unsigned root to write; each root key holder then runs 'pds trust sign'")
	if _, err := parseWithArgs(fs, args, "only its flags", 0, 0, "deployment", "threshold", "out"); err != nil {
		return err
	}
	spec := trust.RootSpec{Deployment: *dep, RootThreshold: *threshold, Expires: time.Now().Add(*expires)}
	var err error
	if spec.RootKeys, err = readKeys(rootKeys); err != nil {
		return err
	}
	if spec.BuildKeys, err = readKeys(buildKeys); err != nil {
		return err
	}
	if spec.TimestampKeys, err = readKeys(tsKeys); err != nil {
		return err
	}
	var prev []byte
	if *previous != "" {
		if prev, err = os.ReadFile(*previous); err != nil {
			return err
		}
	}
	b, err := trust.NewRoot(spec, prev)
	if err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		return err
	}
	info, err := trust.DescribeRoot(b)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s: root version %d of deployment %s, unsigned; it needs %d of its %d root keys' signatures ('pds trust sign')\n",
		*out, info.Version, info.Deployment, *threshold, len(rootKeys))
	return nil
}

func runTrustSign(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("trust sign", trustUsage("sign"), stderr)
	keyPath := fs.String("key", "", "a root key's secret key file")
	pos, err := parseWithArgs(fs, args, "ROOT_FILE", 1, 1, "key")
	if err != nil {
		return err
	}
	s, err := trust.ReadSigner(*keyPath)
	if err != nil {
		return err
	}
	b, err := os.ReadFile(pos[0])
	if err != nil {
		return err
	}
	if b, err = trust.SignRoot(b, s); err != nil {
		return err
	}
	tmp := pos[0] + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, pos[0]); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "signed %s with key %s\n", pos[0], s.ID())
	return nil
}

func runTrustShow(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("trust show", trustUsage("show"), stderr)
	pos, err := parseWithArgs(fs, args, "ROOT_FILE", 1, 1)
	if err != nil {
		return err
	}
	b, err := os.ReadFile(pos[0])
	if err != nil {
		return err
	}
	info, err := trust.DescribeRoot(b)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "root version %d of deployment %s, expires %s\n", info.Version, info.Deployment, info.Expires.Format(time.RFC3339))
	names := make([]string, 0, len(info.Roles))
	for n := range info.Roles {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		r := info.Roles[n]
		fmt.Fprintf(stdout, "  %-9s %d of %s\n", n, r.Threshold, strings.Join(r.KeyIDs, ", "))
	}
	fmt.Fprintf(stdout, "  signed by %d root keys: %s\n", len(info.Signed), strings.Join(info.Signed, ", "))
	return nil
}

func runTrustPublishRoot(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("trust publish-root", trustUsage("publish-root"), stderr)
	legacy := fs.String("legacy-key", "", "the minisign secret key replicas trust today: sign root version 1 with it too, so they adopt the root on their next pull")
	tsign := addSigningFlags(fs, 48*time.Hour)
	s3 := originFlags(fs)
	pos, err := parseWithArgs(fs, args, "ROOT_FILE ORIGIN", 2, 2)
	if err != nil {
		return err
	}
	b, err := os.ReadFile(pos[0])
	if err != nil {
		return err
	}
	build, ts, err := tsign.signers()
	if err != nil {
		return err
	}
	o, err := fleet.OpenOrigin(pos[1], *s3)
	if err != nil {
		return err
	}
	st := fleet.TrustStore(o)
	v, err := trust.PublishRoot(ctx, st, b)
	if err != nil {
		return err
	}
	if *legacy != "" {
		if v != 1 {
			return fmt.Errorf("%w: --legacy-key signs root version 1 only; this is version %d", errUsage, v)
		}
		k, err := snapshots.ReadPrivateKey(*legacy, os.Getenv("PDS_SIGNING_PASSWORD"))
		if err != nil {
			return err
		}
		sig, err := snapshots.SignBytes(b, k, "file:"+trust.AdoptedName)
		if err != nil {
			return err
		}
		if err := st.Put(ctx, trust.AdoptedSigName, sig); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "signed root version 1 with minisign key %s: replicas that trust it adopt the root on their next pull\n", k.ID())
	}
	fmt.Fprintf(stdout, "published root version %d to %s/%s/%d.root.json\n", v, o, fleet.TrustDir, v)
	if build == nil {
		return nil
	}
	rb, err := trust.Resign(ctx, st, build, ts, *tsign.valid, time.Now())
	if err != nil {
		return fmt.Errorf("the root is published, but the current build was not signed again under it: %w", err)
	}
	fmt.Fprintf(stdout, "signed the current build %s (sequence %d) again under root version %d with key %s\n", rb.ID, rb.Sequence, v, build.ID())
	return nil
}

// signingFlags are the flags of the commands that sign a build's
// statements.
type signingFlags struct {
	key, tsKey *string
	valid      *time.Duration
}

func addSigningFlags(fs *flag.FlagSet, valid time.Duration) signingFlags {
	return signingFlags{
		key:   fs.String("key", "", "build key ('pds trust keygen'): sign the build's trust statements with it, for replicas that trust a root"),
		tsKey: fs.String("timestamp-key", "", "with --key: the timestamp key (default: the --key file)"),
		valid: fs.Duration("valid", valid, "with --key: how long the timestamp holds (replicas report the data stale after it)"),
	}
}

func (f signingFlags) signers() (build, ts *trust.Signer, err error) {
	if *f.key == "" {
		if *f.tsKey != "" {
			return nil, nil, fmt.Errorf("%w: --timestamp-key needs --key", errUsage)
		}
		return nil, nil, nil
	}
	if build, err = trust.ReadSigner(*f.key); err != nil {
		return nil, nil, err
	}
	ts = build
	if *f.tsKey != "" {
		if ts, err = trust.ReadSigner(*f.tsKey); err != nil {
			return nil, nil, err
		}
	}
	return build, ts, nil
}

func (f signingFlags) publishTrust() (*fleet.PublishTrust, error) {
	build, ts, err := f.signers()
	if err != nil || build == nil {
		return nil, err
	}
	return &fleet.PublishTrust{Build: build, Timestamp: ts, Validity: *f.valid}, nil
}

func (f signingFlags) bundleTrust(rootsDir string) (*fleet.BundleTrust, error) {
	build, ts, err := f.signers()
	if err != nil || build == nil {
		if err == nil && rootsDir != "" {
			err = fmt.Errorf("%w: --roots needs --key", errUsage)
		}
		return nil, err
	}
	if rootsDir == "" {
		return nil, fmt.Errorf("%w: --key needs --roots, the folder of the roots the bundle carries", errUsage)
	}
	var roots [][]byte
	for v := 1; ; v++ {
		b, err := os.ReadFile(filepath.Join(rootsDir, fmt.Sprintf("%d.root.json", v)))
		if errors.Is(err, fs.ErrNotExist) {
			break
		}
		if err != nil {
			return nil, err
		}
		roots = append(roots, b)
	}
	if len(roots) == 0 {
		return nil, fmt.Errorf("%s holds no 1.root.json", rootsDir)
	}
	return &fleet.BundleTrust{Roots: roots, Build: build, Timestamp: ts, Validity: *f.valid}, nil
}

func runSnapshotTimestamp(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("snapshot timestamp", synopsis("timestamp"), stderr)
	keyPath := fs.String("key", "", "the timestamp key's secret key file")
	valid := fs.Duration("valid", 48*time.Hour, "how long the new timestamp holds")
	s3 := originFlags(fs)
	pos, err := parseWithArgs(fs, args, "ORIGIN", 1, 1, "key")
	if err != nil {
		return err
	}
	s, err := trust.ReadSigner(*keyPath)
	if err != nil {
		return err
	}
	o, err := fleet.OpenOrigin(pos[0], *s3)
	if err != nil {
		return err
	}
	v, exp, err := trust.RenewTimestamp(ctx, fleet.TrustStore(o), s, *valid, time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "timestamp version %d at %s/%s/%s holds until %s\n", v, o, fleet.TrustDir, trust.TimestampName, exp.Format(time.RFC3339))
	return nil
}
