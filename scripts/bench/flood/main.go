package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/productdata/pds/internal/flood"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "the server's address")
	silent := flag.Bool("silent", false, "silent connections instead of keep-alive ones")
	conns := flag.Int("conns", 10000, "connections in the flood")
	from := flag.String("from", "127.0.0.2", "the flood's source address")
	probeFrom := flag.String("probe-from", "127.0.0.3", "the new client's source address")
	path := flag.String("path", "/v1/whoami", "path of the requests (GET, with the key in $KEY)")
	probeFor := flag.Duration("probe-for", 5*time.Second, "how long the new client sends requests")
	interval := flag.Duration("interval", 50*time.Millisecond, "pause between the new client's requests")
	flag.Parse()
	req := "GET " + *path + " HTTP/1.1\r\nHost: pds\r\nAuthorization: Bearer " + os.Getenv("KEY") + "\r\n\r\n"
	res, err := flood.Run(flood.Options{Addr: *addr, Silent: *silent, Conns: *conns, From: *from, ProbeFrom: *probeFrom,
		Request: req, ProbeFor: *probeFor, Interval: *interval})
	if err != nil {
		log.Fatal(err)
	}
	kind := "keepalive"
	if *silent {
		kind = "silent"
	}
	fmt.Printf("RESULT kind=%s conns=%d %v\n", kind, *conns, res)
}
