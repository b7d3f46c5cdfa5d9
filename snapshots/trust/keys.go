package trust

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"

	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/theupdateframework/go-tuf/v2/metadata"

	"github.com/productdata/pds/internal/osfile"
)

// A key pair is two files: the secret key, an Ed25519 key in PKCS #8 PEM
// (what `openssl genpkey -algorithm ed25519` writes), and the public key
// in TUF's own form ({"keytype":"ed25519","scheme":"ed25519","keyval":
// {"public":HEX}}), whose id is what the statements name.

// Signer signs statements with one secret key.
type Signer struct {
	signer signature.Signer
	key    *metadata.Key
	id     string
}

// ID is the key's TUF key id.
func (s *Signer) ID() string { return s.id }

// GenerateKey writes a new Ed25519 key pair: the secret key to keyPath
// (mode 0600) and the public key to pubPath (0644). Neither may exist.
func GenerateKey(keyPath, pubPath string) (id string, err error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", err
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return "", err
	}
	k, err := metadata.KeyFromPublicKey(pub)
	if err != nil {
		return "", err
	}
	pubJSON, err := json.MarshalIndent(k, "", "  ")
	if err != nil {
		return "", err
	}
	if err := osfile.WriteNew(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		return "", err
	}
	if err := osfile.WriteNew(pubPath, append(pubJSON, '\n'), 0o644); err != nil {
		os.Remove(keyPath)
		return "", err
	}
	return k.ID()
}

// ReadSigner reads a secret key file that GenerateKey (or openssl) wrote.
func ReadSigner(path string) (*Signer, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("secret key: %w", err)
	}
	block, _ := pem.Decode(b)
	if block == nil || block.Type != "PRIVATE KEY" {
		return nil, fmt.Errorf("secret key %s: not a PEM \"PRIVATE KEY\" (PKCS #8) file; make one with 'pds trust keygen'", path)
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("secret key %s: %w", path, err)
	}
	priv, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("secret key %s: a %T, not an Ed25519 key", path, k)
	}
	s, err := signature.LoadED25519Signer(priv)
	if err != nil {
		return nil, fmt.Errorf("secret key %s: %w", path, err)
	}
	mk, err := metadata.KeyFromPublicKey(priv.Public())
	if err != nil {
		return nil, fmt.Errorf("secret key %s: %w", path, err)
	}
	id, err := mk.ID()
	if err != nil {
		return nil, err
	}
	return &Signer{signer: s, key: mk, id: id}, nil
}

// ReadKey reads a public key file that GenerateKey wrote.
func ReadKey(path string) (*metadata.Key, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("public key: %w", err)
	}
	var k metadata.Key
	if err := json.Unmarshal(b, &k); err != nil {
		return nil, fmt.Errorf("public key %s: not a TUF key (%w); make one with 'pds trust keygen'", path, err)
	}
	if k.Type != metadata.KeyTypeEd25519 || k.Scheme != metadata.KeySchemeEd25519 || len(k.Value.PublicKey) != 2*ed25519.PublicKeySize {
		return nil, fmt.Errorf("public key %s: an Ed25519 key is {\"keytype\":\"ed25519\",\"scheme\":\"ed25519\",\"keyval\":{\"public\":HEX}}", path)
	}
	return &k, nil
}
