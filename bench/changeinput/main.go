// Command changeinput copies an input directory, changing the claims of a
// share of its products: what a night's changes look like to the delta
// benchmark. A product is changed when the xxhash of its subject, modulo
// 10,000, is below --per10k; each of its claims gets a new value (a string
// gets " (changed)" appended, a number 1 added, a boolean flipped). Every
// other file is hard-linked (or copied, across file systems).
package main

import (
	"bufio"

	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	"github.com/cespare/xxhash/v2"
)

func main() {
	in := flag.String("in", "", "input directory")
	out := flag.String("out", "", "output directory (created)")
	per10k := flag.Uint64("per10k", 100, "products changed per 10,000 (100 is 1%)")
	flag.Parse()
	if *in == "" || *out == "" {
		log.Fatal("usage: changeinput --in DIR --out DIR [--per10k N]")
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		log.Fatal(err)
	}
	entries, err := os.ReadDir(*in)
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range entries {
		src, dst := filepath.Join(*in, e.Name()), filepath.Join(*out, e.Name())
		os.Remove(dst)
		if e.Name() == "claims.ndjson" {
			n, err := changeClaims(src, dst, *per10k)
			if err != nil {
				log.Fatal(err)
			}
			fmt.Fprintf(os.Stderr, "changeinput: %d claims changed\n", n)
			continue
		}
		if err := os.Link(src, dst); err != nil {
			if err := copyFile(src, dst); err != nil {
				log.Fatal(err)
			}
		}
	}
}

func changeClaims(src, dst string, per10k uint64) (int, error) {
	r, err := os.Open(src)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	f, err := os.Create(dst)
	if err != nil {
		return 0, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	sc := bufio.NewScanner(bufio.NewReaderSize(r, 1<<20))
	sc.Buffer(nil, 16<<20)
	n := 0
	var subj struct {
		Subject string `json:"subject"`
	}
	for sc.Scan() {
		line := sc.Bytes()
		subj.Subject = ""
		if json.Unmarshal(line, &subj) == nil && xxhash.Sum64String(subj.Subject)%10000 < per10k {
			var c map[string]any
			if json.Unmarshal(line, &c) == nil {
				if obj, ok := c["object"].(map[string]any); ok {
					switch v := obj["value"].(type) {
					case string:
						obj["value"] = v + " (changed)"
					case float64:
						obj["value"] = v + 1
					case bool:
						obj["value"] = !v
					}
					if b, err := json.Marshal(c); err == nil {
						line = b
						n++
					}
				}
			}
		}
		w.Write(line)
		w.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		return n, err
	}
	if err := w.Flush(); err != nil {
		return n, err
	}
	return n, f.Close()
}

func copyFile(src, dst string) error {
	r, err := os.Open(src)
	if err != nil {
		return err
	}
	defer r.Close()
	w, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, r); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}
