package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/productdata/pds/service/keys"
)

const keysUsage = `usage: pds keys <subcommand> [flags]

subcommands:
  add     --keys FILE --tenant NAME --scopes a,b,c [--quota N --quota-period day|month] [--rate R --burst B]
  list    --keys FILE
  revoke  --keys FILE ID
  rotate  --keys FILE [--grace DURATION] ID

Run 'pds keys <subcommand> -h' for its flags.`

func runKeys(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: a keys subcommand is required: add, list, revoke or rotate (pds keys -h)", errUsage)
	}
	switch args[0] {
	case "-h", "--help", "-help":
		fmt.Fprintln(stdout, keysUsage)
		return nil
	case "add":
		return runKeysAdd(args[1:], stdout, stderr)
	case "list":
		return runKeysList(args[1:], stdout, stderr)
	case "revoke":
		return runKeysRevoke(args[1:], stdout, stderr)
	case "rotate":
		return runKeysRotate(args[1:], stdout, stderr)
	}
	return fmt.Errorf("%w: unknown keys subcommand %q: add, list, revoke or rotate (pds keys -h)", errUsage, args[0])
}

func runKeysAdd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("keys add", "keys add --keys FILE --tenant NAME --scopes a,b,c [--quota N --quota-period day|month] [--rate R --burst B]", stderr)
	file := fs.String("keys", "", "keys file (created when missing; holds hashes only)")
	tenant := fs.String("tenant", "", "tenant the key belongs to")
	scopes := fs.String("scopes", "", "comma-separated scopes: "+strings.Join(keys.AllScopes, ","))
	quota := fs.Int64("quota", 0, "billing units per period (0: unlimited)")
	period := fs.String("quota-period", "month", "quota period: day or month")
	rate := fs.Float64("rate", 0, "requests per second (0: unlimited)")
	burst := fs.Int("burst", 0, "burst size for --rate")
	if err := parseFlags(fs, args, "keys", "tenant", "scopes"); err != nil {
		return err
	}
	var list []string
	for _, s := range strings.Split(*scopes, ",") {
		if s = strings.TrimSpace(s); s != "" {
			list = append(list, s)
		}
	}
	n := keys.New{Tenant: *tenant, Scopes: list, Quota: *quota, QuotaPeriod: *period, Rate: *rate, Burst: *burst}
	if err := n.Check(); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	secret, k, err := keys.Add(*file, n, time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, secret)
	fmt.Fprintf(stderr, "added key %s for tenant %s with scopes %s to %s; the key is shown only once\n", k.ID, k.Tenant, strings.Join(k.Scopes, ","), *file)
	return nil
}

func runKeysList(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("keys list", "keys list --keys FILE", stderr)
	file := fs.String("keys", "", "keys file")
	if err := parseFlags(fs, args, "keys"); err != nil {
		return err
	}
	list, err := keys.List(*file)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTENANT\tSCOPES\tLIMITS\tCREATED\tSTATE")
	for _, k := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Tenant, strings.Join(k.Scopes, ","), limitsText(k), k.CreatedAt, stateText(k, time.Now()))
	}
	return tw.Flush()
}

// limitsText says a key's quota and rate limit in a few words.
func limitsText(k keys.Key) string {
	var parts []string
	if k.Quota > 0 {
		parts = append(parts, fmt.Sprintf("quota %d/%s", k.Quota, k.QuotaPeriod))
	}
	if k.Rate > 0 {
		b := k.Burst
		if b == 0 {
			b = max(1, int(k.Rate+0.999999))
		}
		parts = append(parts, fmt.Sprintf("rate %g/s burst %d", k.Rate, b))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// stateText says whether a key is in force: active, revoked, or rotated with
// its old secrets' grace.
func stateText(k keys.Key, now time.Time) string {
	if k.RevokedAt != "" {
		return "revoked " + k.RevokedAt
	}
	s := "active"
	if k.RotatedAt != "" {
		s += ", rotated " + k.RotatedAt
	}
	for _, p := range k.Previous {
		if until, err := time.Parse(time.RFC3339, p.Until); err == nil && now.Before(until) {
			s += ", old secret valid until " + p.Until
		}
	}
	return s
}

func runKeysRevoke(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("keys revoke", "keys revoke --keys FILE ID", stderr)
	file := fs.String("keys", "", "keys file")
	pos, err := parseFlagsArgs(fs, args, 1, "keys")
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return fmt.Errorf("%w: the id of the key to revoke is required (key_…, see pds keys list)", errUsage)
	}
	k, err := keys.Revoke(*file, pos[0], time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "revoked key %s of tenant %s in %s; a running pds serve refuses it once it rereads the file\n", k.ID, k.Tenant, *file)
	return nil
}

func runKeysRotate(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("keys rotate", "keys rotate --keys FILE [--grace DURATION] ID", stderr)
	file := fs.String("keys", "", "keys file")
	grace := fs.Duration("grace", 0, "how long the old secret stays valid (e.g. 24h; 0: refused at once)")
	pos, err := parseFlagsArgs(fs, args, 1, "keys")
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return fmt.Errorf("%w: the id of the key to rotate is required (key_…, see pds keys list)", errUsage)
	}
	if *grace < 0 {
		return fmt.Errorf("%w: --grace must not be negative", errUsage)
	}
	secret, k, err := keys.Rotate(*file, pos[0], *grace, time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, secret)
	old := "the old secret is refused from the server's next reload"
	if *grace > 0 {
		old = "the old secret stays valid until " + k.Previous[len(k.Previous)-1].Until
	}
	fmt.Fprintf(stderr, "rotated key %s of tenant %s in %s; the new key is shown only once; %s\n", k.ID, k.Tenant, *file, old)
	return nil
}
