package main

import (
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"strings"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8090", "listen address")
	ids := flag.String("ids", "", "file of identifiers, one a line (the benchmark's paths)")
	flag.Parse()
	docs := map[string][]byte{}
	if *ids != "" {
		b, err := os.ReadFile(*ids)
		if err != nil {
			log.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			id := strings.TrimPrefix(strings.TrimSpace(line), "/v1/products/")
			if id == "" {
				continue
			}
			docs[id] = []byte(fmt.Sprintf(`{"request_id":"req_01JBASELINE000000000000000","status":"found","data":{"subject":"gtin:%s","identifiers":["gtin:%s"],"trust_level":"L3","status":"active","manufacturer":"Baseline Foods GmbH","brand":"Baseline","updated_at":"2025-01-01T00:00:00Z","has_passport":true},"meta":{"duration_ms":0}}`, id, id))
		}
	}
	http.HandleFunc("/v1/products/", func(w http.ResponseWriter, r *http.Request) {
		doc, ok := docs[strings.TrimPrefix(r.URL.Path, "/v1/products/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(doc)
	})
	log.Printf("baseline: %d documents on %s", len(docs), *addr)
	log.Fatal(http.ListenAndServe(*addr, nil))
}
