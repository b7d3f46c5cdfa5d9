package main

import (
	"flag"
	"fmt"
	"log/slog"
	"net/netip"
	"net/url"
	"strings"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/internal/buildinfo"
	"github.com/productdata/pds/resolver"
	"github.com/productdata/pds/service"
)

// resolverFlags are the flags of pds serve that turn on and place the GS1
// Digital Link resolver (passport pages and linksets, no key needed).
type resolverFlags struct {
	on                  bool
	addr, root, apiRoot string
	trusted             string
	rate                float64
	burst               int
	trustedPrefixes     []netip.Prefix
}

func (f *resolverFlags) define(fs *flag.FlagSet) {
	fs.BoolVar(&f.on, "resolver", false, "also answer GS1 Digital Link paths (/01/{gtin}…): passport pages, linksets and /.well-known/gs1resolver, public data only, no key (see docs/resolver.md)")
	fs.StringVar(&f.addr, "resolver-addr", "", "serve the resolver on this address instead of --addr's listener (which then serves only the API)")
	fs.StringVar(&f.root, "resolver-root", "", "the resolver's public base URL (https://id.example.com), used in every link it writes (default: each request's own host)")
	fs.StringVar(&f.apiRoot, "resolver-api-root", "", "with --resolver-addr: the public base URL of the API, to link its answers from pages and linksets (default: no such links)")
	fs.Float64Var(&f.rate, "resolver-rate", 5, "requests a second each client address may make to the resolver (0: no limit)")
	fs.IntVar(&f.burst, "resolver-burst", 20, "how many resolver requests a client address may make at once before --resolver-rate applies")
	fs.StringVar(&f.trusted, "resolver-trusted-proxies", "", "comma-separated addresses or CIDR prefixes of reverse proxies whose X-Forwarded-For and X-Forwarded-Proto the resolver believes")
}

// check refuses resolver flags that cannot work together.
func (f *resolverFlags) check() error {
	if !f.on && (f.addr != "" || f.root != "" || f.apiRoot != "" || f.trusted != "") {
		return fmt.Errorf("%w: the --resolver-* flags need --resolver", errUsage)
	}
	if f.apiRoot != "" && f.addr == "" {
		return fmt.Errorf("%w: --resolver-api-root is for a resolver on its own --resolver-addr; on the API's listener the API is linked at the resolver's root", errUsage)
	}
	for _, u := range []struct{ name, v string }{{"--resolver-root", f.root}, {"--resolver-api-root", f.apiRoot}} {
		if u.v == "" {
			continue
		}
		p, err := url.Parse(u.v)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" || (p.Path != "" && p.Path != "/") || p.RawQuery != "" {
			return fmt.Errorf("%w: %s %q: want a base URL such as https://id.example.com", errUsage, u.name, u.v)
		}
	}
	if f.rate < 0 || f.burst < 0 {
		return fmt.Errorf("%w: --resolver-rate and --resolver-burst cannot be negative", errUsage)
	}
	for _, t := range strings.Split(f.trusted, ",") {
		if t = strings.TrimSpace(t); t == "" {
			continue
		}
		p, err := netip.ParsePrefix(t)
		if err != nil {
			a, aerr := netip.ParseAddr(t)
			if aerr != nil {
				return fmt.Errorf("%w: --resolver-trusted-proxies: %q is neither an address nor a CIDR prefix", errUsage, t)
			}
			p = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())
		}
		f.trustedPrefixes = append(f.trustedPrefixes, p.Masked())
	}
	return nil
}

// handler builds the resolver, or returns nil when it is off. Its clients
// are limited per address by the service's meter.
func (f *resolverFlags) handler(svc *service.Service, meter domain.Meter, log *slog.Logger) *resolver.Handler {
	if !f.on {
		return nil
	}
	o := resolver.Options{Root: f.root, Meter: meter, Rate: f.rate, Burst: f.burst, TrustedProxies: f.trustedPrefixes,
		Version: buildinfo.Version(), Log: log}
	switch {
	case f.addr == "":
		o.APILinks = true // the API is on the same listener, at the same root
	case f.apiRoot != "":
		o.APILinks, o.APIRoot = true, f.apiRoot
	}
	return resolver.New(svc, o)
}
