package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/format"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
)

func main() {
	dict := flag.String("dict", "", "path of the GS1 Barcode Syntax Dictionary text file")
	out := flag.String("out", "aitable.go", "Go file to write")
	flag.Parse()
	if *dict == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: aigen -dict DICTIONARY.txt [-out aitable.go]")
		os.Exit(2)
	}
	src, err := generateFile(*dict)
	if err != nil {
		fmt.Fprintln(os.Stderr, "aigen:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "aigen:", err)
		os.Exit(1)
	}
}

// entry is one AI as the dictionary describes it.
type entry struct {
	ai         string
	title      string
	fixedLen   bool
	dlAttr     bool
	comps      []comp
	req        [][][]string // each req= attribute: alternatives, each a group of AIs (patterns)
	ex         []string
	dlpkey     bool
	qualifiers [][]string
}

type comp struct {
	cset     byte
	min, max int
	optional bool
	linters  []string
}

func generateFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	release, entries, err := parse(f)
	if err != nil {
		return nil, err
	}
	return render(release, entries)
}

// parse reads the dictionary: comment lines start with '#', other non-blank
// lines are entries "AIs [Flags] Specification [Attributes...] [# Title]".
func parse(r io.Reader) (release string, entries []entry, err error) {
	sc := bufio.NewScanner(r)
	lineNo := 0
	seen := map[string]bool{}
	for sc.Scan() {
		lineNo++
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "#") {
			if rest, ok := strings.CutPrefix(line, "# Release:"); ok && release == "" {
				release = strings.TrimSpace(rest)
			}
			continue
		}
		es, err := parseLine(line)
		if err != nil {
			return "", nil, fmt.Errorf("line %d: %w", lineNo, err)
		}
		for _, e := range es {
			if seen[e.ai] {
				return "", nil, fmt.Errorf("line %d: AI %s defined twice", lineNo, e.ai)
			}
			seen[e.ai] = true
			entries = append(entries, e)
		}
	}
	if err := sc.Err(); err != nil {
		return "", nil, err
	}
	if release == "" {
		return "", nil, errors.New("no \"# Release:\" line")
	}
	if len(entries) == 0 {
		return "", nil, errors.New("no entries")
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].ai < entries[j].ai })
	return release, entries, nil
}

const flagChars = "*!?\"$%&'()+,-./:;<=>@[\\]^_`{|}~"

func parseLine(line string) ([]entry, error) {
	var e entry
	body := line
	if i := strings.IndexByte(line, '#'); i >= 0 {
		body = line[:i]
		e.title = strings.TrimSpace(line[i+1:])
	}
	fields := strings.Fields(body)
	if len(fields) < 2 {
		return nil, fmt.Errorf("too few fields in %q", line)
	}
	ais, err := expandAIs(fields[0])
	if err != nil {
		return nil, err
	}
	fields = fields[1:]
	if f := fields[0]; f[0] != '[' && !isLetter(f[0]) {
		for i := 0; i < len(f); i++ {
			if !strings.ContainsRune(flagChars, rune(f[i])) {
				return nil, fmt.Errorf("bad flag %q", f[i])
			}
		}
		e.fixedLen = strings.Contains(f, "*")
		e.dlAttr = strings.Contains(f, "?")
		fields = fields[1:]
	}
	for len(fields) > 0 && !isAttribute(fields[0]) {
		c, err := parseComp(fields[0])
		if err != nil {
			return nil, err
		}
		e.comps = append(e.comps, c)
		fields = fields[1:]
	}
	if len(e.comps) == 0 {
		return nil, fmt.Errorf("no specification in %q", line)
	}
	for _, f := range fields {
		key, val, hasVal := strings.Cut(f, "=")
		switch key {
		case "req":
			var alts [][]string
			for _, alt := range strings.Split(val, ",") {
				alts = append(alts, strings.Split(alt, "+"))
			}
			e.req = append(e.req, alts)
		case "ex":
			e.ex = append(e.ex, strings.Split(val, ",")...)
		case "dlpkey":
			e.dlpkey = true
			if hasVal {
				for _, alt := range strings.Split(val, "|") {
					e.qualifiers = append(e.qualifiers, strings.Split(alt, ","))
				}
			}
		default:
			return nil, fmt.Errorf("unknown attribute %q", f)
		}
	}
	var out []entry
	for _, ai := range ais {
		x := e
		x.ai = ai
		out = append(out, x)
	}
	return out, nil
}

func isLetter(c byte) bool { return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' }

func isAttribute(f string) bool {
	return f == "dlpkey" || strings.Contains(f, "=")
}

// expandAIs reads "01" or a range "3100-3105".
func expandAIs(f string) ([]string, error) {
	lo, hi, isRange := strings.Cut(f, "-")
	if !isDigits(lo) || len(lo) < 2 || len(lo) > 4 {
		return nil, fmt.Errorf("bad AI %q", f)
	}
	if !isRange {
		return []string{lo}, nil
	}
	if !isDigits(hi) || len(hi) != len(lo) {
		return nil, fmt.Errorf("bad AI range %q", f)
	}
	a, _ := strconv.Atoi(lo)
	b, _ := strconv.Atoi(hi)
	if b < a {
		return nil, fmt.Errorf("bad AI range %q", f)
	}
	var ais []string
	for i := a; i <= b; i++ {
		ais = append(ais, fmt.Sprintf("%0*d", len(lo), i))
	}
	return ais, nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// parseComp reads "N13,csum,gcppos1", "X..20" or "[N3],iso3166".
func parseComp(f string) (comp, error) {
	var c comp
	typ, linters := f, ""
	if strings.HasPrefix(f, "[") {
		end := strings.IndexByte(f, ']')
		if end < 0 {
			return c, fmt.Errorf("unclosed [ in %q", f)
		}
		c.optional = true
		typ, linters = f[1:end], f[end+1:]
		if linters != "" && linters[0] != ',' {
			return c, fmt.Errorf("bad component %q", f)
		}
		linters = strings.TrimPrefix(linters, ",")
	} else if i := strings.IndexByte(f, ','); i >= 0 {
		typ, linters = f[:i], f[i+1:]
	}
	if linters != "" {
		c.linters = strings.Split(linters, ",")
	}
	if typ == "" || !strings.ContainsRune("NXYZ", rune(typ[0])) {
		return c, fmt.Errorf("bad component type in %q", f)
	}
	c.cset = typ[0]
	n := typ[1:]
	variable := strings.HasPrefix(n, "..")
	n = strings.TrimPrefix(n, "..")
	v, err := strconv.Atoi(n)
	if err != nil || v < 1 || v > 99 {
		return c, fmt.Errorf("bad length in %q", f)
	}
	c.min, c.max = v, v
	if variable {
		c.min = 1
	}
	return c, nil
}

func render(release string, entries []entry) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by gs1/internal/aigen from the GS1 Barcode Syntax Dictionary; DO NOT EDIT.\n")
	fmt.Fprintf(&b, "//\n// Source: GS1 Barcode Syntax Dictionary, release %s,\n", release)
	fmt.Fprintf(&b, "// (c) GS1 AISBL and the BWIPP and Zint projects, Apache License 2.0.\n\n")
	fmt.Fprintf(&b, "package gs1\n\n")
	fmt.Fprintf(&b, "// dictionaryRelease is the release of the dictionary this table was generated from.\n")
	fmt.Fprintf(&b, "const dictionaryRelease = %q\n\n", release)
	fmt.Fprintf(&b, "// aiTable holds every AI of the dictionary, ranges expanded, in lexical order.\n")
	fmt.Fprintf(&b, "var aiTable = []aiDef{\n")
	for _, e := range entries {
		fmt.Fprintf(&b, "{ai: %q, title: %q", e.ai, e.title)
		if e.fixedLen {
			b.WriteString(", fixedLen: true")
		}
		if e.dlAttr {
			b.WriteString(", dlAttr: true")
		}
		b.WriteString(", comps: []aiComp{")
		for i, c := range e.comps {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "{cset: '%c', min: %d, max: %d", c.cset, c.min, c.max)
			if c.optional {
				b.WriteString(", optional: true")
			}
			if len(c.linters) > 0 {
				fmt.Fprintf(&b, ", linters: %s", strList(c.linters))
			}
			b.WriteString("}")
		}
		b.WriteString("}")
		if len(e.req) > 0 {
			b.WriteString(", req: [][][]string{")
			for i, alts := range e.req {
				if i > 0 {
					b.WriteString(", ")
				}
				b.WriteString("{")
				for j, g := range alts {
					if j > 0 {
						b.WriteString(", ")
					}
					b.WriteString(strList(g)[len("[]string"):])
				}
				b.WriteString("}")
			}
			b.WriteString("}")
		}
		if len(e.ex) > 0 {
			fmt.Fprintf(&b, ", ex: %s", strList(e.ex))
		}
		if e.dlpkey {
			b.WriteString(", dlpkey: true")
		}
		if len(e.qualifiers) > 0 {
			b.WriteString(", qualifiers: [][]string{")
			for i, q := range e.qualifiers {
				if i > 0 {
					b.WriteString(", ")
				}
				b.WriteString(strList(q)[len("[]string"):])
			}
			b.WriteString("}")
		}
		b.WriteString("},\n")
	}
	b.WriteString("}\n")
	return format.Source(b.Bytes())
}

func strList(ss []string) string {
	var b strings.Builder
	b.WriteString("[]string{")
	for i, s := range ss {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(s))
	}
	b.WriteString("}")
	return b.String()
}
