package snapshots

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"aead.dev/minisign"

	"github.com/productdata/pds/internal/osfile"
)

// PublicKey checks manifest signatures.
type PublicKey struct {
	key  minisign.PublicKey
	path string
}

// PrivateKey signs manifests.
type PrivateKey struct {
	key minisign.PrivateKey
}

// ReadPublicKey reads a minisign public key file (the two-line format that
// `minisign -G` and `pds snapshot keygen` write).
func ReadPublicKey(path string) (*PublicKey, error) {
	k, err := minisign.PublicKeyFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("public key %s: %v", path, err)
	}
	return &PublicKey{key: k, path: path}, nil
}

// ID is the key's id as minisign prints it (upper-case hex).
func (k *PublicKey) ID() string { return keyID(k.key.ID()) }

// ReadPrivateKey reads a minisign secret key file. An encrypted key (the
// default of `minisign -G`) needs its password; a key written by
// `pds snapshot keygen` or `minisign -G -W` has none, and password is ignored.
func ReadPrivateKey(path, password string) (*PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("secret key: %v", err)
	}
	var k minisign.PrivateKey
	if minisign.IsEncrypted(b) {
		if password == "" {
			return nil, fmt.Errorf("secret key %s is encrypted; set its password in PDS_SIGNING_PASSWORD", path)
		}
		if k, err = minisign.DecryptKey(password, b); err != nil {
			return nil, fmt.Errorf("secret key %s: %v", path, err)
		}
	} else if err := k.UnmarshalText(b); err != nil {
		return nil, fmt.Errorf("secret key %s: %v", path, err)
	}
	return &PrivateKey{key: k}, nil
}

// ID is the key's id as minisign prints it (upper-case hex).
func (k *PrivateKey) ID() string { return keyID(k.key.ID()) }

func keyID(id uint64) string { return strings.ToUpper(strconv.FormatUint(id, 16)) }

// GenerateKey writes a new key pair: the public key to pubPath (mode 0644)
// and the unencrypted secret key to secPath (mode 0600). Neither may exist.
func GenerateKey(pubPath, secPath string) (*PublicKey, error) {
	pub, sec, err := minisign.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	secText, err := sec.MarshalText()
	if err != nil {
		return nil, err
	}
	pubText, err := pub.MarshalText()
	if err != nil {
		return nil, err
	}
	if err := osfile.WriteNew(secPath, append(secText, '\n'), 0o600); err != nil {
		return nil, err
	}
	if err := osfile.WriteNew(pubPath, append(pubText, '\n'), 0o644); err != nil {
		os.Remove(secPath)
		return nil, err
	}
	return &PublicKey{key: pub, path: pubPath}, nil
}

// Sign signs dir/manifest.json with k and writes dir/manifest.json.minisig.
// The signature is minisign's prehashed form (what minisign 0.10 and later
// write); its trusted comment names the build and its sequence. The
// signature file is 0644 whatever the umask, as the snapshot's other files.
func Sign(dir string, k *PrivateKey) error {
	b, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		return fmt.Errorf("sign: %v", err)
	}
	m, err := DecodeManifest(b, filepath.Join(dir, ManifestName))
	if err != nil {
		return err
	}
	r := minisign.NewReader(bytes.NewReader(b))
	if _, err := io.Copy(io.Discard, r); err != nil {
		return err
	}
	trusted := fmt.Sprintf("file:%s build_id:%s sequence:%d", ManifestName, m.BuildID, m.Sequence)
	sig := r.SignWithComments(k.key, trusted, "signature from pds secret key "+k.ID())
	tmp := filepath.Join(dir, "."+SignatureName+".tmp")
	if err := os.WriteFile(tmp, sig, 0o644); err != nil {
		return fmt.Errorf("sign: %v", err)
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		return fmt.Errorf("sign: %v", err)
	}
	return os.Rename(tmp, filepath.Join(dir, SignatureName))
}

// SignBytes returns k's minisign signature of b (prehashed), with the
// trusted comment given: what signs a first root for replicas that trust
// k (package snapshots/trust).
func SignBytes(b []byte, k *PrivateKey, trusted string) ([]byte, error) {
	r := minisign.NewReader(bytes.NewReader(b))
	if _, err := io.Copy(io.Discard, r); err != nil {
		return nil, err
	}
	return r.SignWithComments(k.key, trusted, "signature from pds secret key "+k.ID()), nil
}

// CheckSignature checks that sig is k's valid signature of the manifest
// bytes b (sig empty: the snapshot is not signed).
func (k *PublicKey) CheckSignature(b, sig []byte) error {
	if reason := k.check(b, sig); reason != "" {
		return fmt.Errorf("%w: %s", ErrSignature, reason)
	}
	return nil
}

// check says which of the usual mistakes sig is, or "" when it is good: no
// signature, another key's signature, or a signature that does not match (a
// changed manifest).
func (k *PublicKey) check(b, sig []byte) string {
	if len(sig) == 0 {
		return fmt.Sprintf("the snapshot is not signed (no %s); sign it with 'pds snapshot sign'", SignatureName)
	}
	var s minisign.Signature
	if err := s.UnmarshalText(sig); err != nil {
		return fmt.Sprintf("%s is not a minisign signature (%v)", SignatureName, err)
	}
	if s.KeyID != k.key.ID() {
		return fmt.Sprintf("signed by key %s, not by the trusted key %s (%s)", keyID(s.KeyID), k.ID(), k.path)
	}
	var ok bool
	if s.Algorithm == minisign.HashEdDSA {
		r := minisign.NewReader(bytes.NewReader(b))
		if _, err := io.Copy(io.Discard, r); err != nil {
			return err.Error()
		}
		ok = r.Verify(k.key, sig)
	} else {
		ok = minisign.Verify(k.key, b, sig)
	}
	if !ok {
		return fmt.Sprintf("the signature does not match %s (changed after signing, or a damaged signature)", ManifestName)
	}
	return ""
}

// A Verifier says whether a build's manifest may be served, from the
// signed statement the build keeps beside it: a minisign PublicKey, or a
// trust root (package snapshots/trust).
type Verifier interface {
	// Statement is the name of the statement's file beside the manifest.
	Statement() string
	// Check checks the statement st (empty: there is none) for the
	// manifest's bytes mb.
	Check(mb, st []byte) error
}

// A Verifier may also have a Fallback() Verifier method: VerifyStatement
// asks that one about a build without the first one's statement (a trust
// root adopted from a minisign key still serves the builds that key signed
// before; see package snapshots/trust).

// Statement is the minisign signature's name (Verifier).
func (k *PublicKey) Statement() string { return SignatureName }

// Check says what is wrong with sig as k's signature of mb (Verifier).
func (k *PublicKey) Check(mb, sig []byte) error {
	if reason := k.check(mb, sig); reason != "" {
		return errors.New(reason)
	}
	return nil
}

// VerifyStatement checks dir's manifest against the statement beside it
// with v. It does not check the files; Verify does.
func VerifyStatement(dir string, v Verifier) error {
	b, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		return fmt.Errorf("%w: %s: no readable %s (%w)", ErrInvalid, dir, ManifestName, err)
	}
	st, err := osfile.ReadFile(filepath.Join(dir, v.Statement()))
	if errors.Is(err, fs.ErrNotExist) {
		if f, ok := v.(interface{ Fallback() Verifier }); ok && f.Fallback() != nil {
			return VerifyStatement(dir, f.Fallback())
		}
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %s: %w", ErrSignature, dir, err)
	}
	if err := v.Check(b, st); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrSignature, dir, err)
	}
	return nil
}

// VerifySigned checks dir's statement with v, then every file against the
// manifest (Verify).
func VerifySigned(dir string, v Verifier) (Manifest, error) {
	if err := VerifyStatement(dir, v); err != nil {
		return Manifest{}, err
	}
	return Verify(dir)
}
