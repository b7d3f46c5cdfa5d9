package main

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// rootsEnv is this process's environment without SSL_CERT_FILE and
// SSL_CERT_DIR, with SSL_CERT_DIR set to an empty folder (no roots from any
// folder) and SSL_CERT_FILE to certFile unless it is "".
func rootsEnv(t *testing.T, certFile string, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SSL_CERT_FILE=") && !strings.HasPrefix(kv, "SSL_CERT_DIR=") {
			env = append(env, kv)
		}
	}
	env = append(env, "SSL_CERT_DIR="+t.TempDir())
	if certFile != "" {
		env = append(env, "SSL_CERT_FILE="+certFile)
	}
	return append(env, extra...)
}

// TestPullOverHTTPSTrustsSSLCertFile pulls a signed build from an HTTPS
// origin whose certificate a private certificate authority issued: refused
// as unknown without SSL_CERT_FILE, pulled with SSL_CERT_FILE naming that
// authority.
func TestPullOverHTTPSTrustsSSLCertFile(t *testing.T) {
	dir := t.TempDir()
	pub, key := filepath.Join(dir, "pds.pub"), filepath.Join(dir, "pds.key")
	mustRun(t, "snapshot", "keygen", "--pub", pub, "--key", key)
	root := filepath.Join(dir, "origin")
	mustRun(t, "snapshot", "publish", buildSigned(t, 1, key), "file://"+root)
	srv := httptest.NewUnstartedServer(http.FileServer(http.Dir(root)))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake of the first case
	srv.StartTLS()
	defer srv.Close()
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, certFile string
		ok             bool
		want           string
	}{
		{"without SSL_CERT_FILE", "", false, "certificate signed by unknown authority"},
		{"with SSL_CERT_FILE", ca, true, "is current in"},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := []string{"snapshot", "pull", srv.URL + "/", "--into", filepath.Join(t.TempDir(), "snaps"), "--pubkey", pub}
			child := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
			child.Env = rootsEnv(t, c.certFile, "PDS_HELPER_ARGS="+strings.Join(args, "\x1f"))
			out, err := child.CombinedOutput()
			if (err == nil) != c.ok || !strings.Contains(string(out), c.want) {
				t.Fatalf("pull: %v, %s; want success %v saying %q", err, out, c.ok, c.want)
			}
		})
	}
}

// TestPublicRootsWithoutASystemBundle: with no system roots at all (as in
// the container image), pds trusts the public certificate authorities of
// its embedded bundle; SSL_CERT_FILE replaces them.
func TestPublicRootsWithoutASystemBundle(t *testing.T) {
	ca := filepath.Join(t.TempDir(), "ca.pem")
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	srv.Close()
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, certFile string
		trusted        bool
	}{
		{"no system roots", filepath.Join(t.TempDir(), "absent.pem"), true},
		{"SSL_CERT_FILE", ca, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			child := exec.Command(os.Args[0], "-test.run=^TestHelperRoots$")
			child.Env = rootsEnv(t, c.certFile, "PDS_HELPER_ROOTS=1")
			out, err := child.CombinedOutput()
			if err != nil {
				t.Fatalf("helper: %v\n%s", err, out)
			}
			if want := fmt.Sprintf("public root trusted: %v", c.trusted); !strings.Contains(string(out), want) {
				t.Errorf("helper said %q; want %q", out, want)
			}
		})
	}
}

// TestHelperRoots is not a test: TestPublicRootsWithoutASystemBundle runs
// the test binary with PDS_HELPER_ROOTS set, in a process of its own since
// the system roots are read once, to say whether a public root of the
// embedded bundle verifies against the system's roots.
func TestHelperRoots(t *testing.T) {
	if os.Getenv("PDS_HELPER_ROOTS") == "" {
		return
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		fmt.Println("system roots:", err)
		os.Exit(1)
	}
	for r := range bundle.Roots() {
		if r.Constraint != nil {
			continue
		}
		cert, err := x509.ParseCertificate(r.Certificate)
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		_, err = cert.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: cert.NotBefore.Add(cert.NotAfter.Sub(cert.NotBefore) / 2),
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
		fmt.Printf("public root trusted: %v (%s: %v)\n", err == nil, cert.Subject.CommonName, err)
		os.Exit(0)
	}
	fmt.Println("the bundle holds no unconstrained root")
	os.Exit(1)
}
