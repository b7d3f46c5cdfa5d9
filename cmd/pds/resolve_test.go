package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/productdata/pds/ingest/ingesttest"
)

// resolveIDs are identifiers of every kind of item, a tenant's own product
// among them.
var resolveIDs = []string{"09520123456788", "gtin:09520000000028", "00012345678905", "09520123456789", "9520000000011",
	"internal_sku:ACME-7", "gln:9520000000028", "internal_sku:SKU-1", "x y", "", "9520 1234 5678 8", `{"identifier":"gtin:09520000000011"}`, `{"bad":1}`}

// offline runs 'pds resolve' with stdin and returns its stdout.
func offline(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if err := resolveOffline(context.Background(), args, strings.NewReader(stdin), &out, &errb); err != nil {
		t.Fatalf("pds resolve %v: %v\n%s", args, err, errb.String())
	}
	if !strings.Contains(errb.String(), "pds resolve: ") {
		t.Errorf("no summary on stderr: %q", errb.String())
	}
	return out.String()
}

// post sends body to path as key and returns the answer's body.
func post(t *testing.T, url, key, ctype, body string) []byte {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", ctype)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("%s: %d %v %s", url, res.StatusCode, err, b)
	}
	return b
}

// The offline resolve writes, byte for byte, what the server's stream
// writes for the same lines and tenant, and its items are the batch
// endpoint's.
func TestResolveOfflineMatchesServer(t *testing.T) {
	snap := ingesttest.Build(t, ingesttest.WriteCase(t, ingesttest.CaseFile("passport")))
	keysPath, secrets := ingesttest.Keys(t)
	base, _ := startServe(t, "--snapshot", snap, "--keys", keysPath)
	var ids []string
	for i := 0; i < 2300; i++ {
		ids = append(ids, resolveIDs[i%len(resolveIDs)])
	}
	input := strings.Join(ids, "\n") + "\n"
	for _, c := range []struct{ key, tenant string }{{ingesttest.KeyFull, "public-co"}, {ingesttest.KeyAcme, "acme"}} {
		got := offline(t, input, "--snapshot", snap, "--tenant", c.tenant, "-")
		want := post(t, base+"/v1/products/resolve/stream", secrets[c.key], "application/x-ndjson", input)
		if got != string(want) {
			t.Fatalf("tenant %s: offline and stream differ\noffline: %.2000s\nstream:  %.2000s", c.tenant, got, want)
		}
		lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
		if len(lines) != len(ids)+1 || !strings.Contains(lines[len(lines)-1], `"complete":true`) {
			t.Fatalf("tenant %s: %d lines, last %s", c.tenant, len(lines), lines[len(lines)-1])
		}
		// Every line that is a bare identifier has the batch call's item.
		for i := 0; i < len(resolveIDs)-2; i++ {
			body, _ := json.Marshal(map[string]any{"identifiers": []string{ids[i]}})
			var env struct {
				Data struct{ Items []json.RawMessage } `json:"data"`
			}
			if err := json.Unmarshal(post(t, base+"/v1/products/resolve", secrets[c.key], "application/json", string(body)), &env); err != nil {
				t.Fatal(err)
			}
			if string(env.Data.Items[0]) != lines[i] {
				t.Errorf("tenant %s, line %d: offline %s\nbatch %s", c.tenant, i+1, lines[i], env.Data.Items[0])
			}
		}
	}
	if acme := offline(t, "internal_sku:ACME-7\n", "--snapshot", snap, "--tenant", "acme"); !strings.HasPrefix(acme, `{"input":"internal_sku:ACME-7","status":"found"`) {
		t.Errorf("the tenant's own product: %s", acme)
	}
}

// A CSV file's column is read as the identifiers, and CSV comes out with the
// chosen members.
func TestResolveOfflineCSV(t *testing.T) {
	snap := ingesttest.Build(t, ingesttest.WriteCase(t, ingesttest.CaseFile("passport")))
	file := filepath.Join(t.TempDir(), "catalogue.csv")
	csvIn := "line,code,name\n1,09520123456788,\"Demo, crisps\"\n2,gtin:09520000000028,x\n3,\"x y\",z\n"
	if err := os.WriteFile(file, []byte(csvIn), 0o644); err != nil {
		t.Fatal(err)
	}
	got := offline(t, "", "--snapshot", snap, "--column", "code", file)
	want := offline(t, "09520123456788\ngtin:09520000000028\nx y\n", "--snapshot", snap)
	if got != want {
		t.Errorf("CSV column:\n%s\nwant\n%s", got, want)
	}
	rows := offline(t, "", "--snapshot", snap, "--column", "code", "--format", "csv", "--columns", "input,status,product.brand,error.code", file)
	wantRows := "input,status,product.brand,error.code\n09520123456788,found,Demo,\ngtin:09520000000028,not_found,,\nx y,invalid,,INVALID_IDENTIFIER\n"
	if rows != wantRows {
		t.Errorf("CSV out:\n%s\nwant\n%s", rows, wantRows)
	}
	var errb bytes.Buffer
	err := resolveOffline(context.Background(), []string{"--snapshot", snap, "--column", "gtin", file}, strings.NewReader(""), io.Discard, &errb)
	if err == nil || !strings.Contains(err.Error(), `no column "gtin"`) {
		t.Errorf("a missing column: %v", err)
	}
}
