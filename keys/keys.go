// Package keys holds API keys: the keys file (hashes only, never a key), key
// creation, and the in-memory set the server authenticates against.
package keys

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
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

// Add creates a key, appends its hash to the keys file at path (created when
// missing, written atomically, mode 0600) and returns the key itself.
func Add(path string, n New, now time.Time) (string, Key, error) {
	if err := n.Check(); err != nil {
		return "", Key{}, err
	}
	f, err := readFile(path, true)
	if err != nil {
		return "", Key{}, err
	}
	raw := make([]byte, 25)
	if _, err := rand.Read(raw); err != nil {
		return "", Key{}, err
	}
	secret := "pds_" + strings.ToLower(b32.EncodeToString(raw[:20]))
	id := "key_" + strings.ToLower(b32.EncodeToString(raw[20:]))
	k := Key{ID: id, Hash: Hash(secret), Tenant: n.Tenant, Scopes: n.Scopes, Quota: n.Quota, QuotaPeriod: n.QuotaPeriod,
		Rate: n.Rate, Burst: n.Burst, CreatedAt: now.UTC().Format(time.RFC3339)}
	if n.Quota == 0 {
		k.QuotaPeriod = ""
	}
	f.Keys = append(f.Keys, k)
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return "", Key{}, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".keys-*")
	if err != nil {
		return "", Key{}, err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return "", Key{}, err
	}
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return "", Key{}, err
	}
	if err := tmp.Close(); err != nil {
		return "", Key{}, err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", Key{}, err
	}
	return secret, k, nil
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

// Set is the keys the server accepts, by hash.
type Set struct {
	byHash map[string]*Key
}

// Load reads the keys file.
func Load(path string) (*Set, error) {
	f, err := readFile(path, false)
	if err != nil {
		return nil, err
	}
	s := &Set{byHash: map[string]*Key{}}
	for i := range f.Keys {
		k := &f.Keys[i]
		if len(k.Hash) != 64 || k.Tenant == "" {
			return nil, fmt.Errorf("keys file %s: entry %d has no valid sha256 or tenant", path, i+1)
		}
		s.byHash[strings.ToLower(k.Hash)] = k
	}
	return s, nil
}

// Len is the number of keys.
func (s *Set) Len() int { return len(s.byHash) }

// Lookup returns the key whose hash matches secret.
func (s *Set) Lookup(secret string) (*Key, bool) {
	if secret == "" {
		return nil, false
	}
	h := Hash(secret)
	k, ok := s.byHash[h]
	if !ok || subtle.ConstantTimeCompare([]byte(h), []byte(k.Hash)) != 1 {
		return nil, false
	}
	return k, true
}
