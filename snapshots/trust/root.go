package trust

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/theupdateframework/go-tuf/v2/metadata"
)

// deploymentField is the root's own field naming the deployment it is
// the root of; a build's targets statement names it too, and a replica
// refuses a build made for another deployment.
const deploymentField = "pds_deployment"

// RootSpec says who a root trusts.
type RootSpec struct {
	// Deployment names the fleet (letters, digits, '-', '.', '_'). A
	// new root of the same chain keeps it.
	Deployment string
	// RootKeys sign roots, RootThreshold of them at once (offline keys).
	RootKeys      []*metadata.Key
	RootThreshold int
	// BuildKeys sign the targets and snapshot statements: the nightly
	// build host's key. One signature suffices.
	BuildKeys []*metadata.Key
	// TimestampKeys sign the timestamp statement.
	TimestampKeys []*metadata.Key
	// Expires is when the root stops being valid; a new root must be made
	// before then.
	Expires time.Time
}

// NewRoot returns the unsigned root statement that spec describes: version
// 1, or, after prev (a root's bytes), prev's version plus one. Offline key
// holders then sign it (SignRoot); a new root needs a threshold of prev's
// root keys and of its own.
func NewRoot(spec RootSpec, prev []byte) ([]byte, error) {
	if !validName(spec.Deployment) {
		return nil, fmt.Errorf("deployment %q: use letters, digits, '-', '.' and '_'", spec.Deployment)
	}
	if len(spec.RootKeys) == 0 || len(spec.BuildKeys) == 0 || len(spec.TimestampKeys) == 0 {
		return nil, errors.New("a root names at least one root key, one build key and one timestamp key")
	}
	if spec.RootThreshold < 1 || spec.RootThreshold > len(spec.RootKeys) {
		return nil, fmt.Errorf("root threshold %d: between 1 and the %d root keys", spec.RootThreshold, len(spec.RootKeys))
	}
	r := metadata.Root(spec.Expires.UTC().Truncate(time.Second))
	r.Signed.ConsistentSnapshot = true
	r.Signed.UnrecognizedFields = map[string]any{deploymentField: spec.Deployment}
	if prev != nil {
		p, err := decodeRoot(prev)
		if err != nil {
			return nil, err
		}
		if d := deployment(p); d != spec.Deployment {
			return nil, fmt.Errorf("the previous root is deployment %q's, not %q's", d, spec.Deployment)
		}
		r.Signed.Version = p.Signed.Version + 1
	}
	for _, role := range []struct {
		name string
		keys []*metadata.Key
	}{{metadata.ROOT, spec.RootKeys}, {metadata.TARGETS, spec.BuildKeys}, {metadata.SNAPSHOT, spec.BuildKeys}, {metadata.TIMESTAMP, spec.TimestampKeys}} {
		for _, k := range role.keys {
			if err := r.Signed.AddKey(k, role.name); err != nil {
				return nil, err
			}
		}
	}
	r.Signed.Roles[metadata.ROOT].Threshold = spec.RootThreshold
	return r.ToBytes(true)
}

// SignRoot adds s's signature to the root statement b (replacing an earlier
// one by the same key) and returns the result.
func SignRoot(b []byte, s *Signer) ([]byte, error) {
	r, err := decodeRoot(b)
	if err != nil {
		return nil, err
	}
	r.Signatures = slices.DeleteFunc(r.Signatures, func(sig metadata.Signature) bool { return sig.KeyID == s.id })
	if _, err := r.Sign(s.signer); err != nil {
		return nil, err
	}
	return r.ToBytes(true)
}

// RootInfo is what a root says, for people.
type RootInfo struct {
	Version    int64
	Deployment string
	Expires    time.Time
	// Roles maps each role to its key ids and threshold.
	Roles map[string]RoleInfo
	// Signed are the ids of the root keys whose signatures hold.
	Signed []string
}

// RoleInfo is one role's keys and threshold.
type RoleInfo struct {
	KeyIDs    []string
	Threshold int
}

// DescribeRoot reads a root statement and says whose signatures it carries
// that hold for its own root keys.
func DescribeRoot(b []byte) (RootInfo, error) {
	r, err := decodeRoot(b)
	if err != nil {
		return RootInfo{}, err
	}
	info := RootInfo{Version: r.Signed.Version, Deployment: deployment(r), Expires: r.Signed.Expires, Roles: map[string]RoleInfo{}}
	for name, role := range r.Signed.Roles {
		info.Roles[name] = RoleInfo{KeyIDs: role.KeyIDs, Threshold: role.Threshold}
	}
	for _, sig := range r.Signatures {
		one := *r
		one.Signatures = []metadata.Signature{sig}
		probe := *r
		probe.Signed.Roles = map[string]*metadata.Role{metadata.ROOT: {KeyIDs: r.Signed.Roles[metadata.ROOT].KeyIDs, Threshold: 1}}
		if probe.VerifyDelegate(metadata.ROOT, &one) == nil {
			info.Signed = append(info.Signed, sig.KeyID)
		}
	}
	return info, nil
}

// CheckRoot checks that next may follow prev (nil: next is a first root):
// signed by a threshold of prev's root keys and of its own, one version up.
func CheckRoot(prev, next []byte) error {
	if prev == nil {
		r, err := decodeRoot(next)
		if err != nil {
			return err
		}
		if r.Signed.Version != 1 {
			return fmt.Errorf("%w: a first root is version 1, not %d", ErrUntrusted, r.Signed.Version)
		}
		if err := r.VerifyDelegate(metadata.ROOT, r); err != nil {
			return fmt.Errorf("%w: root version 1: %w", ErrUntrusted, err)
		}
		return nil
	}
	c, err := newChecker(prev, time.Now())
	if err != nil {
		return err
	}
	return c.stepRoot(next)
}

func decodeRoot(b []byte) (*metadata.Metadata[metadata.RootType], error) {
	r, err := metadata.Root().FromBytes(b)
	if err != nil {
		return nil, fmt.Errorf("%w: not a root statement: %w", ErrUntrusted, err)
	}
	if r.Signed.Type != metadata.ROOT {
		return nil, fmt.Errorf("%w: a %q statement, not a root", ErrUntrusted, r.Signed.Type)
	}
	return r, nil
}

func deployment(r *metadata.Metadata[metadata.RootType]) string {
	d, _ := r.Signed.UnrecognizedFields[deploymentField].(string)
	return d
}

func validName(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			return false
		}
	}
	return true
}
