// Command keyproxy is test tooling for scripts/conformance.sh: a loopback
// reverse proxy that adds "Authorization: Bearer <key>" to every request,
// because the MCP conformance suite cannot send one. Host, Origin and every
// other header pass through unchanged. The key is read from a file and is
// never printed.
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"time"
)

func main() {
	target := flag.String("target", "", "base URL of the pds server, such as http://127.0.0.1:8080")
	keyFile := flag.String("key-file", "", "file holding the API key (as printed by pds keys add)")
	listen := flag.String("listen", "127.0.0.1:0", "loopback address to listen on")
	addrFile := flag.String("addr-file", "", "file to write the address listened on to")
	flag.Parse()
	if *target == "" || *keyFile == "" {
		log.Fatal("keyproxy: -target and -key-file are required")
	}
	u, err := url.Parse(*target)
	if err != nil {
		log.Fatalf("keyproxy: -target: %v", err)
	}
	raw, err := os.ReadFile(*keyFile)
	if err != nil {
		log.Fatalf("keyproxy: %v", err)
	}
	key := strings.TrimSpace(string(raw))
	host, _, err := net.SplitHostPort(*listen)
	if err != nil || !net.ParseIP(host).IsLoopback() {
		log.Fatalf("keyproxy: -listen must be a loopback address")
	}
	// One connection per request on both sides: the suite's runs are short,
	// and no reused connection can then be closed under a request.
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.DisableKeepAlives = true
	proxy := &httputil.ReverseProxy{Transport: transport, Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(u)
		r.Out.Host = r.In.Host // the DNS rebinding checks send their own Host
		r.Out.Header.Set("Authorization", "Bearer "+key)
	}}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatalf("keyproxy: %v", err)
	}
	if *addrFile != "" {
		if err := os.WriteFile(*addrFile, []byte(ln.Addr().String()+"\n"), 0o600); err != nil {
			log.Fatalf("keyproxy: %v", err)
		}
	}
	fmt.Fprintf(os.Stderr, "keyproxy: %s -> %s\n", ln.Addr(), u)
	srv := &http.Server{Handler: proxy, ReadHeaderTimeout: 10 * time.Second}
	srv.SetKeepAlivesEnabled(false)
	log.Fatal(srv.Serve(ln))
}
