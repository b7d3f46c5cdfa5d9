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

	"github.com/productdata/pds/domain/gs1"
)

func main() {
	in := flag.String("in", "", "input directory")
	out := flag.String("out", "", "output directory (created)")
	per10k := flag.Uint64("per10k", 100, "products changed per 10,000 (100 is 1%)")
	changes := flag.String("changes", "", "also write the change set of an incremental build to this directory (created)")
	deleteOneIn := flag.Uint64("delete-one-in", 0, "with --changes: delete about one changed product in N instead of changing it (0: none deleted)")
	addPer10k := flag.Uint64("add-per10k", 0, "with --changes: also add about N new products per 10,000 (copies of unchanged products under new identifiers)")
	flag.Parse()
	if *in == "" || *out == "" && *changes == "" {
		log.Fatal("usage: changeinput --in DIR (--out DIR | --changes DIR) [--per10k N] [--delete-one-in N] [--add-per10k N]")
	}
	entries, err := os.ReadDir(*in)
	if err != nil {
		log.Fatal(err)
	}
	if *changes != "" {
		if _, err := writeChanges(*in, *changes, mix{per10k: *per10k, deleteOneIn: *deleteOneIn, addPer10k: *addPer10k}); err != nil {
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

// mix is the share of products a change set changes, deletes and adds.
type mix struct {
	per10k      uint64 // products changed per 10,000
	deleteOneIn uint64 // of those, about one in deleteOneIn deleted instead (0: none)
	addPer10k   uint64 // products added per 10,000 (0: none)
}

// added reports whether the product of subject is copied into the change
// set as a new product: about addPer10k in 10,000 of the products that do
// not change, chosen by a hash of their own so the choice does not follow
// the one of changed.
func added(subject string, m mix) bool {
	return m.addPer10k > 0 && !changed(subject, m.per10k) && xxhash.Sum64String("add "+subject)%10000 < m.addPer10k
}

// addedAt is the updated_at of the changed and added products.
const addedAt = "2026-11-28T00:00:00Z"

// addedSuffix makes the claim and evidence ids of an added product from
// those of the product it copies; the generator's ids never end with it.
const addedSuffix = "-added"

// canonical is identifier as ingest stores it: a GTIN as 14 digits.
func canonical(identifier string) string {
	if v, ok := strings.CutPrefix(identifier, "gtin:"); ok {
		if c, ok := gs1.ValidGTIN(v); ok {
			return "gtin:" + string(c[:])
		}
	}
	return identifier
}

// newIdentifier is an identifier like id that is not in taken: a GTIN of
// the same company prefix with another item reference (a digit near the
// end changed, the check digit made again), so that the sources covering
// its prefix cover it too; any other identifier with a suffix.
func newIdentifier(id string, taken map[string]bool) (string, error) {
	id = canonical(id)
	if v, ok := strings.CutPrefix(id, "gtin:"); ok && len(v) == 14 {
		// The item reference's last digits first; in a dense catalogue
		// (10M generated products fill whole ranges) digits further left
		// too, though the prefix then changes.
		for pos := 12; pos >= 1; pos-- {
			for d := byte(1); d <= 9; d++ {
				b := []byte(v)
				b[pos] = '0' + (b[pos]-'0'+d)%10
				check, ok := gs1.CheckDigit(string(b[:13]))
				if !ok {
					return "", fmt.Errorf("identifier %s: not digits", id)
				}
				b[13] = check
				if cand := "gtin:" + string(b); !taken[cand] {
					return cand, nil
				}
			}
		}
		return "", fmt.Errorf("identifier %s: no free GTIN near it", id)
	}
	for k := 1; ; k++ {
		if cand := fmt.Sprintf("%s-N%d", id, k); !taken[cand] {
			return cand, nil
		}
	}
}

// writeChanges writes the change set: the changed products' lines of
// products, claims (changed), evidence and verdicts; with deleteOneIn
// above 0, deletions.ndjson naming the changed products that are deleted
// instead (see deleted), which have no lines in the other files; and with
// addPer10k above 0, the added products (see added): each a copy of an
// unchanged product's lines under new identifiers (newIdentifier) and new
// claim and evidence ids, citing the same sources and documents. It
// returns the lines written per file, and "deletions" and "added".
func writeChanges(in, out string, m mix) (map[string]int, error) {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
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
	// For the products added: every identifier of the input (canonical),
	// so that a new one is none of them, and the lines of the products
	// they copy.
	taken := map[string]bool{}
	var copies [][]byte
	var err error
	if counts["products"], err = keep("products.ndjson", func(line []byte) ([]byte, bool) {
		if m.addPer10k > 0 {
			for _, id := range probe.Identifiers {
				taken[canonical(id)] = true
			}
		}
		if len(probe.Identifiers) == 0 {
			return nil, false
		}
		if added(probe.Identifiers[0], m) {
			copies = append(copies, bytes.Clone(line))
		}
		if !changed(probe.Identifiers[0], m.per10k) {
			return nil, false
		}
		if deleted(probe.Identifiers[0], m.deleteOneIn) {
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
			p["updated_at"] = addedAt
			if b, err := json.Marshal(p); err == nil {
				line = b
			}
		}
		return line, true
	}); err != nil {
		return nil, err
	}
	if m.deleteOneIn > 0 {
		if err := os.WriteFile(filepath.Join(out, "deletions.ndjson"), deletions.Bytes(), 0o644); err != nil {
			return nil, err
		}
	}
	// newOf maps each identifier of a copied product, as the input spells
	// it and canonical, to the added product's.
	newOf := map[string]string{}
	if len(copies) > 0 {
		f, err := os.OpenFile(filepath.Join(out, "products.ndjson"), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return nil, err
		}
		for _, line := range copies {
			var p map[string]any
			if err := json.Unmarshal(line, &p); err != nil {
				f.Close()
				return nil, err
			}
			old, _ := p["identifiers"].([]any)
			fresh := make([]any, len(old))
			for i, o := range old {
				s, _ := o.(string)
				nid, err := newIdentifier(s, taken)
				if err != nil {
					f.Close()
					return nil, err
				}
				taken[nid] = true
				newOf[s], newOf[canonical(s)] = nid, nid
				fresh[i] = nid
			}
			p["identifiers"] = fresh
			p["updated_at"] = addedAt
			b, err := json.Marshal(p)
			if err != nil {
				f.Close()
				return nil, err
			}
			if _, err := f.Write(append(b, '\n')); err != nil {
				f.Close()
				return nil, err
			}
		}
		if err := f.Close(); err != nil {
			return nil, err
		}
		counts["products"] += len(copies)
		counts["added"] = len(copies)
	}
	newSubject := func(subject string) (string, bool) {
		if nid, ok := newOf[subject]; ok {
			return nid, true
		}
		nid, ok := newOf[canonical(subject)]
		return nid, ok
	}
	// rewrite sets the members of a line that an added product's copy
	// changes; ok is false when the line is not an object.
	rewrite := func(line []byte, set func(map[string]any)) ([]byte, bool) {
		var c map[string]any
		if json.Unmarshal(line, &c) != nil {
			return nil, false
		}
		set(c)
		b, err := json.Marshal(c)
		return b, err == nil
	}
	copiedClaims := map[string]bool{}
	if counts["claims"], err = keep("claims.ndjson", func(line []byte) ([]byte, bool) {
		if nid, ok := newSubject(probe.Subject); ok {
			copiedClaims[probe.ID] = true
			return rewrite(line, func(c map[string]any) {
				c["id"] = probe.ID + addedSuffix
				c["subject"] = nid
				if refs, ok := c["evidence_refs"].([]any); ok {
					for i, r := range refs {
						if s, ok := r.(string); ok {
							refs[i] = s + addedSuffix
						}
					}
				}
				if s, ok := c["superseded_by"].(string); ok {
					c["superseded_by"] = s + addedSuffix
				}
			})
		}
		if !ids[probe.Subject] {
			return nil, false
		}
		claimIDs[probe.ID] = true
		line, _ = changeLine(line)
		return line, true
	}); err != nil {
		return nil, err
	}
	if counts["evidence"], err = keep("evidence.ndjson", func(line []byte) ([]byte, bool) {
		if copiedClaims[probe.ClaimID] {
			return rewrite(line, func(c map[string]any) {
				c["id"] = probe.ID + addedSuffix
				c["claim_id"] = probe.ClaimID + addedSuffix
			})
		}
		return line, claimIDs[probe.ClaimID]
	}); err != nil {
		return nil, err
	}
	if counts["verdicts"], err = keep("verdicts.ndjson", func(line []byte) ([]byte, bool) {
		if nid, ok := newSubject(probe.Subject); ok {
			return rewrite(line, func(c map[string]any) { c["subject"] = nid })
		}
		return line, ids[probe.Subject]
	}); err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "changeinput: change set in %s: %v\n", out, counts)
	return counts, nil
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
