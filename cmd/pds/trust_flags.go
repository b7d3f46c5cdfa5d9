package main

import (
	"flag"
	"fmt"
	"path/filepath"

	"github.com/productdata/pds/snapshots"
	"github.com/productdata/pds/snapshots/trust"
)

// trustFlags are the flags of the commands that check builds: a trust
// root, a minisign key, or both (the root, serving kept builds the key
// signed before the fleet moved to it).
type trustFlags struct {
	root, pubkey *string
}

func addTrustFlags(fs *flag.FlagSet, what string) trustFlags {
	return trustFlags{
		root:   fs.String("trust-root", "", "root of trust (a root statement, 'pds trust root'): "+what+" only builds the statements under it name"),
		pubkey: fs.String("pubkey", "", "minisign public key: "+what+" builds it signed (before a fleet moved to a trust root; after, kept builds it signed)"),
	}
}

// verifier is what the flags trust for the snapshots folder snaps: nil
// when neither flag is set (and required is false). A folder whose
// replica adopted a root signed by the --pubkey key trusts that root.
func (t trustFlags) verifier(snaps string, required bool) (snapshots.Verifier, error) {
	var key *snapshots.PublicKey
	if *t.pubkey != "" {
		k, err := snapshots.ReadPublicKey(*t.pubkey)
		if err != nil {
			return nil, err
		}
		key = k
	}
	if *t.root != "" {
		r, err := trust.ReadReplica(*t.root, snaps)
		if err != nil {
			return nil, err
		}
		if key != nil {
			r = r.WithFallback(key)
		}
		return r, nil
	}
	if key != nil {
		r, err := trust.Adopted(snaps, key)
		if err != nil {
			return nil, err
		}
		if r != nil {
			return r, nil
		}
		return key, nil
	}
	if required {
		return nil, fmt.Errorf("%w: give --trust-root (a root of trust) or --pubkey (a minisign key)", errUsage)
	}
	return nil, nil
}

// describe names what v is, for messages.
func describeTrust(v snapshots.Verifier) string {
	switch v := v.(type) {
	case *snapshots.PublicKey:
		return "minisign key " + v.ID()
	case *trust.Replica:
		return "trust root"
	}
	return "nothing"
}

// snapsOf is the snapshots folder a build folder (or DIR/current) is in.
func snapsOf(build string) string { return filepath.Dir(filepath.Clean(build)) }
