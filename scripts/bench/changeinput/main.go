package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/zstd"
)

func main() {
	in := flag.String("in", "", "input directory")
	out := flag.String("out", "", "output directory (created)")
	per10k := flag.Uint64("per10k", 100, "products changed per 10,000 (100 is 1%)")
	changes := flag.String("changes", "", "also write the change set of an incremental build to this directory (created)")
	deleteOneIn := flag.Uint64("delete-one-in", 0, "with --changes: delete about one changed product in N instead of changing it (0: none deleted)")
	flag.Parse()
	if *in == "" || *out == "" && *changes == "" {
		log.Fatal("usage: changeinput --in DIR (--out DIR | --changes DIR) [--per10k N] [--delete-one-in N]")
	}
	entries, err := os.ReadDir(*in)
	if err != nil {
		log.Fatal(err)
	}
	if *changes != "" {
		if err := writeChanges(*in, *changes, *per10k, *deleteOneIn); err != nil {
			log.Fatal(err)
		}
	}
	if *out == "" {
		return
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		log.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "claims.ndjson.") {
			log.Fatalf("--out changes a plain claims.ndjson only, not %s", e.Name())
		}
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

// changed reports whether the product of subject changes.
func changed(subject string, per10k uint64) bool { return xxhash.Sum64String(subject)%10000 < per10k }

// deleted reports whether a changed product of subject is deleted instead:
// about one in oneIn of them, chosen by the bits of the same hash that
// changed does not use, so the choice is deterministic and independent of
// the share changed. A oneIn of 0 deletes none.
func deleted(subject string, oneIn uint64) bool {
	return oneIn > 0 && (xxhash.Sum64String(subject)/10000)%oneIn == 0
}

// changeLine is a claim line with a new value.
func changeLine(line []byte) ([]byte, bool) {
	var c map[string]any
	if json.Unmarshal(line, &c) != nil {
		return line, false
	}
	obj, ok := c["object"].(map[string]any)
	if !ok {
		return line, false
	}
	switch v := obj["value"].(type) {
	case string:
		obj["value"] = v + " (changed)"
	case float64:
		obj["value"] = v + 1
	case bool:
		obj["value"] = !v
	}
	b, err := json.Marshal(c)
	if err != nil {
		return line, false
	}
	return b, true
}

// writeChanges writes the change set: the changed products' lines of
// products, claims (changed), evidence and verdicts, and with deleteOneIn
// above 0, deletions.ndjson naming the changed products that are deleted
// instead (see deleted); those have no lines in the other files.
func writeChanges(in, out string, per10k, deleteOneIn uint64) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	claimIDs := map[string]bool{}
	var probe struct {
		ID          string   `json:"id"`
		Subject     string   `json:"subject"`
		ClaimID     string   `json:"claim_id"`
		Identifiers []string `json:"identifiers"`
	}
	keep := func(file string, pick func(line []byte) ([]byte, bool)) (int, error) {
		r, err := openInput(in, file)
		if os.IsNotExist(err) {
			return 0, nil
		}
		if err != nil {
			return 0, err
		}
		defer r.Close()
		f, err := os.Create(filepath.Join(out, file))
		if err != nil {
			return 0, err
		}
		w := bufio.NewWriterSize(f, 1<<20)
		sc := bufio.NewScanner(bufio.NewReaderSize(r, 1<<20))
		sc.Buffer(nil, 16<<20)
		n := 0
		for sc.Scan() {
			probe.ID, probe.Subject, probe.ClaimID, probe.Identifiers = "", "", "", nil
			if json.Unmarshal(sc.Bytes(), &probe) != nil {
				continue
			}
			if line, ok := pick(sc.Bytes()); ok {
				w.Write(line)
				w.WriteByte('\n')
				n++
			}
		}
		if err := sc.Err(); err != nil {
			return n, err
		}
		if err := w.Flush(); err != nil {
			return n, err
		}
		return n, f.Close()
	}
	// The identifiers of the products changed: claims and verdicts may name
	// a product by any of them.
	ids := map[string]bool{}
	counts := map[string]int{}
	var deletions bytes.Buffer
	var err error
	if counts["products"], err = keep("products.ndjson", func(line []byte) ([]byte, bool) {
		if len(probe.Identifiers) == 0 || !changed(probe.Identifiers[0], per10k) {
			return nil, false
		}
		if deleted(probe.Identifiers[0], deleteOneIn) {
			b, _ := json.Marshal(map[string]string{"identifier": probe.Identifiers[0]})
			deletions.Write(b)
			deletions.WriteByte('\n')
			counts["deletions"]++
			return nil, false
		}
		for _, id := range probe.Identifiers {
			ids[id] = true
		}
		// A product that changed was updated: its search index entry
		// changes too.
		var p map[string]any
		if json.Unmarshal(line, &p) == nil {
			p["updated_at"] = "2026-11-28T00:00:00Z"
			if b, err := json.Marshal(p); err == nil {
				line = b
			}
		}
		return line, true
	}); err != nil {
		return err
	}
	if deleteOneIn > 0 {
		if err := os.WriteFile(filepath.Join(out, "deletions.ndjson"), deletions.Bytes(), 0o644); err != nil {
			return err
		}
	}
	if counts["claims"], err = keep("claims.ndjson", func(line []byte) ([]byte, bool) {
		if !ids[probe.Subject] {
			return nil, false
		}
		claimIDs[probe.ID] = true
		line, _ = changeLine(line)
		return line, true
	}); err != nil {
		return err
	}
	if counts["evidence"], err = keep("evidence.ndjson", func(line []byte) ([]byte, bool) { return line, claimIDs[probe.ClaimID] }); err != nil {
		return err
	}
	if counts["verdicts"], err = keep("verdicts.ndjson", func(line []byte) ([]byte, bool) { return line, ids[probe.Subject] }); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "changeinput: change set in %s: %v\n", out, counts)
	return nil
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
		if json.Unmarshal(line, &subj) == nil && changed(subj.Subject, per10k) {
			var ok bool
			if line, ok = changeLine(line); ok {
				n++
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

// openInput opens input file name (products.ndjson) of dir, plain, .zst or
// .gz, and decompresses it; an error satisfying os.IsNotExist when there is
// none.
func openInput(dir, name string) (io.ReadCloser, error) {
	for _, ext := range []string{"", ".zst", ".gz"} {
		f, err := os.Open(filepath.Join(dir, name+ext))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		switch ext {
		case ".zst":
			zr, err := zstd.NewReader(f)
			if err != nil {
				f.Close()
				return nil, err
			}
			return readCloser{zr, func() { zr.Close(); f.Close() }}, nil
		case ".gz":
			gz, err := gzip.NewReader(f)
			if err != nil {
				f.Close()
				return nil, fmt.Errorf("%s: %w", f.Name(), err)
			}
			return readCloser{gz, func() { f.Close() }}, nil
		}
		return f, nil
	}
	return nil, &os.PathError{Op: "open", Path: filepath.Join(dir, name), Err: os.ErrNotExist}
}

// readCloser is a decompressing reader and what closes it and its file.
type readCloser struct {
	io.Reader
	close func()
}

func (r readCloser) Close() error { r.close(); return nil }

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
