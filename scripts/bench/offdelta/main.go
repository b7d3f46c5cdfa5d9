package main

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"strconv"
	"strings"

	"github.com/cespare/xxhash/v2"
)

func main() {
	in := flag.String("in", "", "the dump (.jsonl or .jsonl.gz)")
	out := flag.String("out", "", "the delta file to write")
	per10k := flag.Uint64("per10k", 100, "products changed per 10,000 (100 is 1%)")
	flag.Parse()
	if *in == "" || *out == "" {
		log.Fatal("usage: offdelta --in DUMP --out DELTA [--per10k N]")
	}
	n, err := run(*in, *out, *per10k)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "offdelta: %d products changed in %s\n", n, *out)
}

func run(in, out string, per10k uint64) (int, error) {
	f, err := os.Open(in)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var r io.Reader = bufio.NewReaderSize(f, 1<<20)
	if strings.HasSuffix(in, ".gz") {
		gz, err := gzip.NewReader(r)
		if err != nil {
			return 0, err
		}
		r = gz
	}
	o, err := os.Create(out)
	if err != nil {
		return 0, err
	}
	var w io.Writer = o
	var gz *gzip.Writer
	if strings.HasSuffix(out, ".gz") {
		gz = gzip.NewWriter(o)
		w = gz
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 64<<20)
	seen := map[string]bool{}
	n := 0
	for sc.Scan() {
		var rec map[string]any
		if json.Unmarshal(sc.Bytes(), &rec) != nil {
			continue
		}
		code, _ := rec["code"].(string)
		if code == "" || seen[code] || xxhash.Sum64String(code)%10000 >= per10k {
			continue
		}
		seen[code] = true
		if name, ok := rec["product_name"].(string); ok {
			rec["product_name"] = name + " (changed)"
		} else {
			rec["product_name"] = "changed"
		}
		switch t := rec["last_modified_t"].(type) {
		case float64:
			rec["last_modified_t"] = t + 86400
		case string:
			if v, err := strconv.ParseInt(t, 10, 64); err == nil {
				rec["last_modified_t"] = strconv.FormatInt(v+86400, 10)
			}
		}
		line, err := json.Marshal(rec)
		if err != nil {
			return n, err
		}
		bw.Write(line)
		bw.WriteByte('\n')
		n++
	}
	if err := sc.Err(); err != nil {
		return n, err
	}
	if err := bw.Flush(); err != nil {
		return n, err
	}
	if gz != nil {
		if err := gz.Close(); err != nil {
			return n, err
		}
	}
	return n, o.Close()
}
