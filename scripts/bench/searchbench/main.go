package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"

	"github.com/productdata/pds/index"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: searchbench queries|pds|score [flags]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	products := fs.String("products", "", "products.ndjson")
	n := fs.Int("n", 500, "queries")
	seed := fs.Uint64("seed", 1, "seed")
	out := fs.String("out", "", "output file")
	base := fs.String("url", "", "pds base URL")
	key := fs.String("key", "", "API key")
	queries := fs.String("queries", "", "queries file")
	pairs := fs.String("pairs", "", "intended TAB first-hit file")
	fs.Parse(os.Args[2:])
	var err error
	switch os.Args[1] {
	case "queries":
		err = makeQueries(*products, *n, *seed, *out)
	case "pds":
		err = scorePDS(*base, *key, *queries)
	case "score":
		err = scorePairs(*pairs)
	case "paths":
		err = eachQuery(*queries, func(q string) string {
			return "/v1/products/search?manufacturer=" + url.QueryEscape(q)
		})
	case "sql":
		err = eachQuery(*queries, func(q string) string {
			lit := "'" + strings.ReplaceAll(q, "'", "''") + "'"
			return "SELECT manufacturer FROM products WHERE manufacturer % " + lit + " ORDER BY similarity(manufacturer, " + lit + ") DESC, subject LIMIT 20;"
		})
	case "pgcopy":
		err = pgCopy(*products)
	default:
		err = fmt.Errorf("unknown mode %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "searchbench:", err)
		os.Exit(1)
	}
}

func makeQueries(products string, n int, seed uint64, out string) error {
	f, err := os.Open(products)
	if err != nil {
		return err
	}
	defer f.Close()
	counts := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var p struct {
			Manufacturer string `json:"manufacturer"`
			Tenant       string `json:"tenant"`
		}
		if json.Unmarshal(sc.Bytes(), &p) == nil && p.Tenant == "" {
			counts[p.Manufacturer]++
		}
	}
	names := make([]string, 0, len(counts))
	for m := range counts {
		names = append(names, m)
	}
	sort.Strings(names)
	total := 0
	for _, m := range names {
		total += counts[m]
	}
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	picked := map[string]bool{}
	var lines []string
	for tries := 0; len(lines) < n && tries < n*100; tries++ {
		// weighted by product count, so big makers are asked about more
		x := r.IntN(total)
		var name string
		for _, m := range names {
			if x < counts[m] {
				name = m
				break
			}
			x -= counts[m]
		}
		if picked[name] || len([]rune(name)) < 6 {
			continue
		}
		picked[name] = true
		lines = append(lines, typo(r, name)+"\t"+name)
	}
	return os.WriteFile(out, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}

// typo makes one or two edits at letters of the name.
func typo(r *rand.Rand, name string) string {
	rs := []rune(strings.ToLower(name))
	edits := 1 + r.IntN(2)
	for e := 0; e < edits; e++ {
		var letters []int
		for i, c := range rs {
			if c >= 'a' && c <= 'z' {
				letters = append(letters, i)
			}
		}
		if len(letters) < 2 {
			break
		}
		i := letters[r.IntN(len(letters))]
		c := rune('a' + r.IntN(26))
		switch r.IntN(4) {
		case 0:
			rs[i] = c
		case 1:
			rs = append(rs[:i], rs[i+1:]...)
		case 2:
			rs = append(rs[:i], append([]rune{c}, rs[i:]...)...)
		default:
			if i+1 < len(rs) {
				rs[i], rs[i+1] = rs[i+1], rs[i]
			}
		}
	}
	return string(rs)
}

func readPairs(path string) ([][2]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out [][2]string
	for _, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		a, c, _ := strings.Cut(line, "\t")
		out = append(out, [2]string{a, c})
	}
	return out, nil
}

func scorePDS(base, key, queries string) error {
	qs, err := readPairs(queries)
	if err != nil {
		return err
	}
	hits := 0
	for _, q := range qs {
		req, _ := http.NewRequest("GET", base+"/v1/products/search?limit=1&manufacturer="+url.QueryEscape(q[0]), nil)
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		var body struct {
			Data struct {
				Items []struct {
					Manufacturer string `json:"manufacturer"`
				} `json:"items"`
			} `json:"data"`
		}
		json.NewDecoder(res.Body).Decode(&body)
		res.Body.Close()
		if len(body.Data.Items) > 0 && index.Normalize(body.Data.Items[0].Manufacturer) == index.Normalize(q[1]) {
			hits++
		}
	}
	fmt.Printf("first=%d of=%d rate=%.3f\n", hits, len(qs), float64(hits)/float64(len(qs)))
	return nil
}

func scorePairs(path string) error {
	ps, err := readPairs(path)
	if err != nil {
		return err
	}
	hits := 0
	for _, p := range ps {
		if p[1] != "" && index.Normalize(p[0]) == index.Normalize(p[1]) {
			hits++
		}
	}
	fmt.Printf("first=%d of=%d rate=%.3f\n", hits, len(ps), float64(hits)/float64(len(ps)))
	return nil
}

func eachQuery(path string, line func(string) string) error {
	qs, err := readPairs(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	for _, q := range qs {
		fmt.Fprintln(w, line(q[0]))
	}
	return nil
}

func pgCopy(products string) error {
	f, err := os.Open(products)
	if err != nil {
		return err
	}
	defer f.Close()
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer w.Flush()
	esc := strings.NewReplacer("\\", "\\\\", "\t", " ", "\n", " ", "\r", " ")
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var p struct {
			Identifiers  []string `json:"identifiers"`
			Manufacturer string   `json:"manufacturer"`
			Tenant       string   `json:"tenant"`
		}
		if json.Unmarshal(sc.Bytes(), &p) != nil || p.Tenant != "" || len(p.Identifiers) == 0 {
			continue
		}
		fmt.Fprintf(w, "%s\t%s\n", esc.Replace(p.Identifiers[0]), esc.Replace(p.Manufacturer))
	}
	return sc.Err()
}
