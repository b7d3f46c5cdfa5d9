package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/productdata/pds/ingest/ingesttest"
)

// sampleSnapshot builds the bundled sample (its showcase products, and
// tenant acme-retail's private data) with the real ingest.
func sampleSnapshot(t *testing.T) string {
	t.Helper()
	return ingesttest.Build(t, filepath.Join(ingesttest.Root(), "sample-input"))
}

var noFollow = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func fetch(t *testing.T, url string) (int, http.Header, string) {
	t.Helper()
	res, err := noFollow.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(b)
}

// The resolver is off unless --resolver; on, it answers on the API's
// listener, or only on --resolver-addr when that is given, and /v1 keeps
// requiring a key.
func TestServeResolverListeners(t *testing.T) {
	snap := sampleSnapshot(t)
	keysPath, _ := ingesttest.Keys(t)
	const dl = "/01/09520123456788"

	off, _ := startServe(t, "--snapshot", snap, "--keys", keysPath)
	if code, _, body := fetch(t, off+dl); code != 404 || !strings.Contains(body, "ROUTE_NOT_FOUND") {
		t.Errorf("without --resolver: %d %s", code, body)
	}

	on, _ := startServe(t, "--snapshot", snap, "--keys", keysPath, "--resolver")
	if code, h, _ := fetch(t, on+dl); code != 307 || h.Get("Location") != on+"/passport"+dl {
		t.Errorf("--resolver: %d %v", code, h)
	}
	if code, _, body := fetch(t, on+"/v1/products/09520123456788/dpp"); code != 401 {
		t.Errorf("/v1 without a key beside the resolver: %d %s", code, body)
	}

	api, stderr := startServe(t, "--snapshot", snap, "--keys", keysPath, "--resolver", "--resolver-addr", "127.0.0.1:0", "--resolver-api-root", "https://api.example.com")
	m := regexp.MustCompile(`"resolver_addr":"([^"]+)"`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("no resolver_addr in the serving line: %s", stderr.String())
	}
	res := "http://" + m[1]
	if code, h, _ := fetch(t, res+dl); code != 307 || h.Get("Location") != res+"/passport"+dl {
		t.Errorf("on --resolver-addr: %d %v", code, h)
	}
	if code, _, body := fetch(t, res+dl+"?linkType=linkset"); code != 200 || !strings.Contains(body, `"https://api.example.com/v1/products/gtin:09520123456788/dpp"`) {
		t.Errorf("linkset on --resolver-addr: %d %s", code, body)
	}
	if code, _, body := fetch(t, api+dl); code != 404 || !strings.Contains(body, "ROUTE_NOT_FOUND") {
		t.Errorf("the API's listener answers the resolver's paths: %d %s", code, body)
	}
	if code, _, body := fetch(t, res+"/v1/products/09520123456788"); code != 404 || !strings.Contains(body, "ROUTE_NOT_FOUND") {
		t.Errorf("the resolver's listener serves the API: %d %s", code, body)
	}
	if code, _, _ := fetch(t, res+"/readyz"); code != 200 {
		t.Errorf("readyz on the resolver's listener: %d", code)
	}

	for _, args := range [][]string{
		{"--resolver-addr", "127.0.0.1:0"},
		{"--resolver", "--resolver-api-root", "https://api.example.com"},
		{"--resolver", "--resolver-root", "id.example.com"},
		{"--resolver", "--resolver-trusted-proxies", "nginx"},
	} {
		code, _, errOut := runCmd(append([]string{"serve", "--snapshot", snap, "--keys", keysPath}, args...)...)
		if code != 2 || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("%v: exit %d %q", args, code, errOut)
		}
	}
}

// The passport page of a showcase product in a real browser: headless
// Chromium (Debian's) driven by puppeteer-core loads it over loopback from
// its Digital Link, checks what a person sees, finds nothing loaded from
// another host and no script, and axe-core finds no serious or critical
// violation; the same for a not-found page. Screenshots go to
// var/test-artifacts/. What the test needs is installed by
// scripts/browser-test.sh; when that fails, so does the test.
func TestPassportPageInABrowser(t *testing.T) {
	out, err := exec.Command("bash", filepath.Join(ingesttest.Root(), "scripts", "browser-test.sh")).Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("scripts/browser-test.sh could not install Chromium, node, puppeteer-core and axe-core: %v\n%s", err, stderr)
	}
	dir := strings.TrimSpace(string(out))
	artifacts := filepath.Join(ingesttest.Root(), "var", "test-artifacts")
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	keysPath, _ := ingesttest.Keys(t)
	base, _ := startServe(t, "--snapshot", sampleSnapshot(t), "--keys", keysPath, "--resolver")
	for _, tc := range []struct {
		name, path string
		sees       []string
	}{
		{"passport", "/01/09520123456788", []string{
			"Havrelys Oat Drink Barista 1 l", "Havregården Oat Works AB",
			"Technical", "Business", "Regulatory", "Authority", "Attested",
			"59 kcal", "0.54 kg CO2e", "oats, gluten", "1 current claim(s) withheld",
			"bytes 52007 to 52210", "sha256:b73d3a15e15caf77cf5d8a1f7e033efc125465c6285d2ccd772540650a5dac7b",
			"Data published by the brand owner through the Brand Publisher Network, CC BY 4.0.",
			"Footprint estimates © EcoMetrics Ltd, CC BY-SA 4.0.", "snapshot build"}},
		{"not-found", "/01/09520123456795", []string{"(not_found)", "What was consulted", "Global Identifier Council"}},
	} {
		shot := filepath.Join(artifacts, tc.name+".png")
		cmd := exec.Command("node", append([]string{filepath.Join(dir, "passport.mjs"), base + tc.path, shot}, tc.sees...)...)
		cmd.Dir = dir
		b, err := cmd.Output()
		var r struct {
			OK         bool
			Problems   []string
			Violations []struct {
				ID, Impact string
			}
			Bytes int
		}
		if jerr := json.Unmarshal(b, &r); jerr != nil {
			t.Fatalf("%s: the browser test printed no result (%v): %s", tc.name, err, b)
		}
		if !r.OK || err != nil {
			t.Errorf("%s: %v", tc.name, r.Problems)
		}
		t.Logf("%s: %d bytes, axe violations (any impact): %v, screenshot %s", tc.name, r.Bytes, r.Violations, shot)
	}
}
