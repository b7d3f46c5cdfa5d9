package keys

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/productdata/pds/internal/osfile"
)

// Scopes a key may hold.
const (
	ScopeValidate = "identifiers:validate"
	ScopeParse    = "digital-links:parse"
	ScopeRead     = "products:read"
	ScopeResolve  = "products:resolve"
	ScopeSearch   = "products:search"
	ScopeSources  = "sources:read"
	ScopeMCP      = "mcp"
)

// AllScopes lists every scope.
var AllScopes = []string{ScopeValidate, ScopeParse, ScopeRead, ScopeResolve, ScopeSearch, ScopeSources, ScopeMCP}

// Key is one entry of the keys file. Hash is the SHA-256 of the key; the key
// itself is never stored.
type Key struct {
	ID          string   `json:"id"`
	Hash        string   `json:"sha256"`
	Tenant      string   `json:"tenant"`
	Scopes      []string `json:"scopes"`
	Quota       int64    `json:"quota,omitempty"`
	QuotaPeriod string   `json:"quota_period,omitempty"`
	Rate        float64  `json:"rate,omitempty"`
	Burst       int      `json:"burst,omitempty"`
	CreatedAt   string   `json:"created_at"`
	// RevokedAt is set when the key was revoked; a revoked key is refused.
	RevokedAt string `json:"revoked_at,omitempty"`
	// RotatedAt is when the secret was last replaced.
	RotatedAt string `json:"rotated_at,omitempty"`
	// Previous holds the hashes of rotated-out secrets that are still
	// accepted until their grace period ends.
	Previous []Previous `json:"previous,omitempty"`
}

// Previous is a rotated-out secret of a key, accepted until Until.
type Previous struct {
	Hash  string `json:"sha256"`
	Until string `json:"until"`
}

// HasScope reports whether the key holds scope.
func (k *Key) HasScope(scope string) bool { return slices.Contains(k.Scopes, scope) }

type file struct {
	Keys []Key `json:"keys"`
}

// New describes a key to create.
type New struct {
	Tenant      string
	Scopes      []string
	Quota       int64
	QuotaPeriod string
	Rate        float64
	Burst       int
}

// Check reports what is wrong with a key description, if anything.
func (n New) Check() error {
	if n.Tenant == "" {
		return errors.New("tenant is required")
	}
	if len(n.Scopes) == 0 {
		return errors.New("at least one scope is required")
	}
	for _, s := range n.Scopes {
		if !slices.Contains(AllScopes, s) {
			return fmt.Errorf("unknown scope %q (scopes: %s)", s, strings.Join(AllScopes, ","))
		}
	}
	if n.Quota < 0 || n.Rate < 0 || n.Burst < 0 {
		return errors.New("quota, rate and burst must not be negative")
	}
	if n.Quota > 0 && n.QuotaPeriod != "day" && n.QuotaPeriod != "month" {
		return errors.New("--quota-period must be day or month")
	}
	return nil
}

// Hash returns the stored form of a key.
func Hash(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

var b32 = base32.StdEncoding.WithPadding(base32.NoPadding)

// newSecret returns a fresh key and a fresh public key id.
func newSecret() (secret, id string, err error) {
	raw := make([]byte, 25)
	if _, err := rand.Read(raw); err != nil {
		return "", "", err
	}
	return "pds_" + strings.ToLower(b32.EncodeToString(raw[:20])), "key_" + strings.ToLower(b32.EncodeToString(raw[20:])), nil
}

// Add creates a key, appends its hash to the keys file at path (created when
// missing, with mode NewFileMode) and returns the key itself.
func Add(path string, n New, now time.Time) (string, Key, error) {
	if err := n.Check(); err != nil {
		return "", Key{}, err
	}
	secret, id, err := newSecret()
	if err != nil {
		return "", Key{}, err
	}
	k := Key{ID: id, Hash: Hash(secret), Tenant: n.Tenant, Scopes: n.Scopes, Quota: n.Quota, QuotaPeriod: n.QuotaPeriod,
		Rate: n.Rate, Burst: n.Burst, CreatedAt: now.UTC().Format(time.RFC3339)}
	if n.Quota == 0 {
		k.QuotaPeriod = ""
	}
	err = update(path, true, func(f *file) error {
		f.Keys = append(f.Keys, k)
		return nil
	})
	if err != nil {
		return "", Key{}, err
	}
	return secret, k, nil
}

// List returns the keys of the keys file at path, in file order.
func List(path string) ([]Key, error) {
	f, err := readFile(path, false)
	return f.Keys, err
}

// ErrNoKey is returned by Revoke and Rotate for an id the file does not hold.
var ErrNoKey = errors.New("no such key")

// Revoke marks the key id revoked: from the server's next reload of the file
// it is refused, and so are its rotated-out secrets.
func Revoke(path, id string, now time.Time) (Key, error) {
	var out Key
	err := update(path, false, func(f *file) error {
		k, err := f.find(path, id)
		if err != nil {
			return err
		}
		if k.RevokedAt != "" {
			return fmt.Errorf("key %s was already revoked at %s", id, k.RevokedAt)
		}
		k.RevokedAt = now.UTC().Format(time.RFC3339)
		k.Previous = nil
		out = *k
		return nil
	})
	return out, err
}

// Rotate gives the key id a new secret, keeping its id, tenant, scopes and
// limits, and returns the new secret. The old secret stays valid for grace
// (not at all when grace is 0); rotated-out secrets whose grace has ended are
// dropped from the file.
func Rotate(path, id string, grace time.Duration, now time.Time) (string, Key, error) {
	if grace < 0 {
		return "", Key{}, errors.New("the grace period must not be negative")
	}
	secret, _, err := newSecret()
	if err != nil {
		return "", Key{}, err
	}
	var out Key
	err = update(path, false, func(f *file) error {
		k, err := f.find(path, id)
		if err != nil {
			return err
		}
		if k.RevokedAt != "" {
			return fmt.Errorf("key %s was revoked at %s; add a new key instead", id, k.RevokedAt)
		}
		var keep []Previous
		for _, p := range k.Previous {
			if until, err := time.Parse(time.RFC3339, p.Until); err == nil && now.Before(until) {
				keep = append(keep, p)
			}
		}
		if grace > 0 {
			keep = append(keep, Previous{Hash: k.Hash, Until: now.Add(grace).UTC().Format(time.RFC3339)})
		}
		k.Previous = keep
		k.Hash = Hash(secret)
		k.RotatedAt = now.UTC().Format(time.RFC3339)
		out = *k
		return nil
	})
	if err != nil {
		return "", Key{}, err
	}
	return secret, out, nil
}

func (f *file) find(path, id string) (*Key, error) {
	for i := range f.Keys {
		if f.Keys[i].ID == id {
			return &f.Keys[i], nil
		}
	}
	return nil, fmt.Errorf("%w: %s is not in %s", ErrNoKey, id, path)
}

// update changes the keys file at path under an exclusive lock on path.lock:
// it reads the file (an absent one is empty when missingOK), lets change
// edit it, and writes the result to a temporary file beside it that is
// synced, given the mode, owner and group of the file it replaces
// (NewFileMode for a new file) and renamed over path; then the directory is
// synced.
func update(path string, missingOK bool, change func(*file) error) error {
	unlock, err := lockFile(path + ".lock")
	if err != nil {
		return err
	}
	defer unlock()
	f, err := readFile(path, missingOK)
	if err != nil {
		return err
	}
	if err := change(&f); err != nil {
		return err
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(path, append(b, '\n'))
}

// lockFile takes an exclusive lock (flock on Unix, LockFileEx on Windows)
// on name (created when missing) and returns its release. The system
// releases it when the process dies.
func lockFile(name string) (func(), error) {
	lf, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("keys file lock: %w", err)
	}
	if err := osfile.Lock(lf); err != nil {
		lf.Close()
		return nil, fmt.Errorf("keys file lock %s: %w", name, err)
	}
	return func() {
		osfile.Unlock(lf)
		lf.Close()
	}, nil
}

// NewFileMode is the mode of a new keys file: readable by every user. The
// file holds the SHA-256 of each key, never a key (a key is 160 random bits,
// so its hash cannot be turned back into it), and the server that reads it
// often runs as another user than the one who adds keys (a container's uid
// 65532, a systemd unit's user). Its tenants, scopes and limits are not
// secret but need not be shown to every local user: an operator who would
// rather not makes the file 0640 and gives its group to the server's user,
// and every change keeps the mode, owner and group the file has.
const NewFileMode fs.FileMode = 0o644

// writeAtomic replaces path with b: a synced temporary file with the mode,
// owner and group of the file it replaces (NewFileMode for a new file),
// renamed into place, then the directory synced so that the rename is
// durable.
func writeAtomic(path string, b []byte) error {
	dir := filepath.Dir(path)
	mode, uid, gid, owned, err := modeOf(path)
	if err != nil {
		return fmt.Errorf("keys file: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".keys-*")
	if err != nil {
		return fmt.Errorf("keys file: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Chmod(mode)
	}
	if err == nil && owned {
		if err = tmp.Chown(uid, gid); err != nil {
			err = fmt.Errorf("keeping the owner %d and group %d of %s (change it as its owner or as root): %w", uid, gid, path, err)
		}
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("keys file: %w", err)
	}
	if err := osfile.SyncPath(dir); err != nil {
		return fmt.Errorf("keys file: sync %s: %w", dir, err)
	}
	return nil
}

// modeOf returns the permission bits and the owner and group of the keys
// file at path, or NewFileMode and owned false when there is no file yet or
// the platform has no owner ids (Windows).
func modeOf(path string) (mode fs.FileMode, uid, gid int, owned bool, err error) {
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return NewFileMode, 0, 0, false, nil
	}
	if err != nil {
		return 0, 0, 0, false, err
	}
	uid, gid, owned = osfile.Owner(info)
	return info.Mode().Perm(), uid, gid, owned, nil
}

func readFile(path string, missingOK bool) (file, error) {
	var f file
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) && missingOK {
		return f, nil
	}
	if err != nil {
		return f, fmt.Errorf("keys file: %w", err)
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return f, fmt.Errorf("keys file %s: not valid JSON: %w", path, err)
	}
	return f, nil
}

// Set is the keys the server accepts, by hash: every key that is not revoked,
// and the rotated-out secrets of those keys until their grace ends.
type Set struct {
	byHash map[[sha256.Size]byte]entry
	n      int
}

type entry struct {
	key   *Key
	until time.Time // zero: no end
}

// Load reads the keys file.
func Load(path string) (*Set, error) {
	f, err := readFile(path, false)
	if err != nil {
		return nil, err
	}
	s := &Set{byHash: map[[sha256.Size]byte]entry{}}
	for i := range f.Keys {
		k := &f.Keys[i]
		if len(k.Hash) != 64 || k.Tenant == "" {
			return nil, fmt.Errorf("keys file %s: entry %d has no valid sha256 or tenant", path, i+1)
		}
		if k.RevokedAt != "" {
			continue
		}
		s.n++
		s.add(k.Hash, entry{key: k})
		for _, p := range k.Previous {
			until, err := time.Parse(time.RFC3339, p.Until)
			if len(p.Hash) != 64 || err != nil {
				return nil, fmt.Errorf("keys file %s: entry %d has a previous secret without a valid sha256 or until", path, i+1)
			}
			s.add(p.Hash, entry{key: k, until: until})
		}
	}
	return s, nil
}

// add files e under its hash, 64 hex digits of either case. A hash that is
// not hex can match no secret's hash, so it is left out.
func (s *Set) add(hexHash string, e entry) {
	var sum [sha256.Size]byte
	if n, err := hex.Decode(sum[:], []byte(hexHash)); err == nil && n == len(sum) {
		s.byHash[sum] = e
	}
}

// Len is the number of keys in force (revoked ones are not counted).
func (s *Set) Len() int { return s.n }

// Lookup returns the key whose current secret, or rotated-out secret still
// in its grace period, is secret. It reads the clock only for a rotated-out
// secret, the one kind of entry that ends.
func (s *Set) Lookup(secret string) (*Key, bool) {
	e, ok := s.find(secret)
	if !ok || e.until.IsZero() {
		return e.key, ok
	}
	return e.at(time.Now())
}

// LookupAt is Lookup at time now.
func (s *Set) LookupAt(secret string, now time.Time) (*Key, bool) {
	e, ok := s.find(secret)
	if !ok {
		return nil, false
	}
	return e.at(now)
}

// at returns e's key if e is in force at now: always for a current secret,
// until its grace ends for a rotated-out one.
func (e entry) at(now time.Time) (*Key, bool) {
	if !e.until.IsZero() && !now.Before(e.until) {
		return nil, false
	}
	return e.key, true
}

// maxStackSecret is the longest presented secret hashed from a stack copy
// (a pds key is 36 bytes); a longer one is converted on the heap.
const maxStackSecret = 64

// find returns the entry of secret, whatever its grace.
func (s *Set) find(secret string) (entry, bool) {
	if secret == "" {
		return entry{}, false
	}
	// The map is keyed by the SHA-256 of the secret, so a lookup's timing
	// tells nothing about the secrets it is compared with. The raw digest is
	// the key (no hex text per call); a key is short enough to be hashed
	// from a copy on the stack.
	var sum [sha256.Size]byte
	if len(secret) <= maxStackSecret {
		var buf [maxStackSecret]byte
		sum = sha256.Sum256(buf[:copy(buf[:], secret)])
	} else {
		sum = sha256.Sum256([]byte(secret))
	}
	e, ok := s.byHash[sum]
	return e, ok
}
