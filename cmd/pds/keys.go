package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/productdata/pds/keys"
)

func runKeys(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "add" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
			fmt.Fprintln(stdout, "usage: pds keys add --keys FILE --tenant NAME --scopes a,b,c [--quota N --quota-period day|month] [--rate R --burst B]")
			return nil
		}
		return fmt.Errorf("%w: the only keys subcommand is 'add' (pds keys add -h)", errUsage)
	}
	fs := newFlags("keys add", "keys add --keys FILE --tenant NAME --scopes a,b,c [--quota N --quota-period day|month] [--rate R --burst B]", stderr)
	file := fs.String("keys", "", "keys file (created when missing; holds hashes only)")
	tenant := fs.String("tenant", "", "tenant the key belongs to")
	scopes := fs.String("scopes", "", "comma-separated scopes: "+strings.Join(keys.AllScopes, ","))
	quota := fs.Int64("quota", 0, "billing units per period (0: unlimited)")
	period := fs.String("quota-period", "month", "quota period: day or month")
	rate := fs.Float64("rate", 0, "requests per second (0: unlimited)")
	burst := fs.Int("burst", 0, "burst size for --rate")
	if err := parseFlags(fs, args[1:], "keys", "tenant", "scopes"); err != nil {
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
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	secret, k, err := keys.Add(*file, n, time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, secret)
	fmt.Fprintf(stderr, "added key %s for tenant %s with scopes %s to %s; the key is shown only once\n", k.ID, k.Tenant, strings.Join(k.Scopes, ","), *file)
	return nil
}
