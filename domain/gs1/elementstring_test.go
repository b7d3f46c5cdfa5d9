package gs1

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// esCase is one ParseElementString call. elems lists "AI=value" words;
// an empty es or dl is not checked, dl "-" means no Digital Link.
type esCase struct {
	rule    string
	in      string
	err     string
	primary string
	elems   string
	warns   string
	es      string
	dl      string
	form    string
	sym     string
	inErr   string
}

const gsc = "\x1d" // GS, FNC1 as scanners send it

var esCases = []esCase{
	// Forms.
	{rule: "bracketed: GTIN, expiry, lot", in: "(01)" + g14 + "(17)261231(10)AB12", primary: "01=" + g14, elems: "01=" + g14 + " 17=261231 10=AB12",
		es: "(01)" + g14 + "(17)261231(10)AB12", dl: idg + "/01/" + g14 + "/10/AB12?17=261231", form: FormBracketed},
	{rule: "fnc1: as a scanner sends it, GS after the variable-length lot", in: "01" + g14 + "10AB12" + gsc + "17261231", primary: "01=" + g14, elems: "01=" + g14 + " 10=AB12 17=261231", form: FormFNC1,
		es: "(01)" + g14 + "(10)AB12(17)261231", dl: idg + "/01/" + g14 + "/10/AB12?17=261231"},
	{rule: "fnc1: ^ stands for FNC1", in: "^01" + g14 + "10AB12^17261231", elems: "01=" + g14 + " 10=AB12 17=261231", primary: "01=" + g14},
	{rule: "fnc1: a leading GS is skipped", in: gsc + "01" + g14 + "17261231", elems: "01=" + g14 + " 17=261231", primary: "01=" + g14},
	{rule: "fnc1: a trailing GS is tolerated", in: "01" + g14 + "10AB" + gsc, elems: "01=" + g14 + " 10=AB", primary: "01=" + g14},
	{rule: "fnc1: GS after a fixed-length value is skipped", in: "01" + g14 + gsc + "17261231", elems: "01=" + g14 + " 17=261231", primary: "01=" + g14},
	{rule: "fnc1: no separator is needed after fixed-length AIs", in: "01" + g14 + "1726123110AB", elems: "01=" + g14 + " 17=261231 10=AB", primary: "01=" + g14},
	{rule: "symbology: ]C1 GS1-128", in: "]C1" + "01" + g14 + "10AB12" + gsc + "21S1", sym: "]C1", elems: "01=" + g14 + " 10=AB12 21=S1", primary: "01=" + g14, dl: idg + "/01/" + g14 + "/10/AB12/21/S1"},
	{rule: "symbology: ]e0 GS1 DataBar", in: "]e0" + "01" + g14 + "3103000195", sym: "]e0", elems: "01=" + g14 + " 3103=000195", primary: "01=" + g14},
	{rule: "symbology: ]d2 GS1 DataMatrix", in: "]d2" + "01" + g14 + "21ABC" + gsc + "17261231", sym: "]d2", elems: "01=" + g14 + " 21=ABC 17=261231", primary: "01=" + g14},
	{rule: "symbology: ]Q3 GS1 QR Code", in: "]Q3" + "00095201234567891235", sym: "]Q3", elems: "00=095201234567891235", primary: "00=095201234567891235", dl: idg + "/00/095201234567891235"},
	{rule: "symbology: ]J1 GS1 DotCode", in: "]J1" + "414" + gln + "25432a", sym: "]J1", elems: "414=" + gln + " 254=32a", primary: "414=" + gln, dl: idg + "/414/" + gln + "/254/32a"},
	{rule: "symbology: ]E0 EAN-13 is a GTIN", in: "]E0" + gln, sym: "]E0", elems: "01=0" + gln, primary: "01=0" + gln},
	{rule: "symbology: ]E4 EAN-8 is a GTIN", in: "]E4" + "96385074", sym: "]E4", elems: "01=00000096385074", primary: "01=00000096385074"},
	{rule: "symbology: ]E0 with a wrong check digit", in: "]E0" + "9520123456789", err: CodeInvalidIdentifier, inErr: "check digit"},
	{rule: "symbology: ]E0 of 12 digits", in: "]E0" + "952012345678", err: CodeInvalidIdentifier, inErr: "13 digits"},
	{rule: "symbology: ]d1 is not GS1 data", in: "]d1" + "01" + g14, err: CodeInvalidIdentifier, inErr: "symbology identifier"},
	{rule: "symbology: cut short", in: "]C", err: CodeInvalidIdentifier, inErr: "cut short"},
	{rule: "symbology: ]C1 with nothing after", in: "]C1", err: CodeInvalidIdentifier, inErr: "no AI"},
	{rule: "symbology: ]C1 with bracketed data is not read as brackets", in: "]C1(01)" + g14, err: CodeInvalidIdentifier},

	// Values and linters, the same as in a Digital Link.
	{rule: "csum: wrong GTIN check digit", in: "(01)09520123456789", err: CodeInvalidIdentifier, inErr: "should be 8"},
	{rule: "csum: wrong check digit in FNC1 form", in: "0109520123456789", err: CodeInvalidIdentifier, inErr: "should be 8"},
	{rule: "format: lot longer than 20", in: "(01)" + g14 + "(10)" + strings.Repeat("A", 21), err: CodeInvalidIdentifier, inErr: "too long"},
	{rule: "format: fnc1 lot longer than 20 runs into the next AI", in: "01" + g14 + "10" + strings.Repeat("A", 20) + "17261231", err: CodeInvalidIdentifier, inErr: "too long"},
	{rule: "format: fixed-length value cut short", in: "0109520123", err: CodeInvalidIdentifier, inErr: "too short"},
	{rule: "yymmd0: month 13", in: "(01)" + g14 + "(17)261331", err: CodeInvalidIdentifier, inErr: "month"},
	{rule: "nozeroprefix: CPID serial 0", in: "(8010)9520ABC(8011)0", err: CodeInvalidIdentifier, inErr: "starts with 0"},
	{rule: "gcppos1: GIAI without company prefix", in: "(8004)ABC", err: CodeInvalidIdentifier, inErr: "Company Prefix"},
	{rule: "iso4217: 396", in: "(415)" + gln + "(8020)R1(3912)396123", elems: "415=" + gln + " 8020=R1 3912=396123", primary: "415=" + gln},
	{rule: "cset82: a space is not allowed", in: "(01)" + g14 + "(10)A B", err: CodeInvalidIdentifier, inErr: "' '"},
	{rule: "cset82: GS inside a bracketed value", in: "(01)" + g14 + "(10)A" + gsc + "B", err: CodeInvalidIdentifier},
	{rule: "bracketed: an escaped ( is part of the value", in: "(01)" + g14 + `(10)A\(1)`, elems: "01=" + g14 + " 10=A(1)", es: "(01)" + g14 + `(10)A\(1)`, dl: idg + "/01/" + g14 + "/10/A%281%29"},
	{rule: "bracketed: ) inside a value needs no escape", in: "(01)" + g14 + "(10)A)1", elems: "01=" + g14 + " 10=A)1"},
	{rule: "bracketed: zero-suppressed GTIN is padded with a warning", in: "(01)" + gln, elems: "01=0" + gln, primary: "01=0" + gln, warns: WarnZeroSuppressedGTIN},

	// Structure errors.
	{rule: "bracketed: unknown AI", in: "(01)" + g14 + "(99999)1", err: CodeInvalidIdentifier, inErr: "not an AI"},
	{rule: "bracketed: AI that does not exist", in: "(01)" + g14 + "(2345)1", err: CodeInvalidIdentifier, inErr: "no GS1 AI 2345"},
	{rule: "bracketed: unclosed AI", in: "(01" + g14, err: CodeInvalidIdentifier, inErr: "not closed"},
	{rule: "bracketed: empty value", in: "(01)(10)AB", err: CodeInvalidIdentifier, inErr: "no value"},
	{rule: "bracketed: empty value at the end", in: "(01)" + g14 + "(10)", err: CodeInvalidIdentifier, inErr: "no value"},
	{rule: "bracketed: letters in the AI", in: "(AB)12", err: CodeInvalidIdentifier, inErr: "not an AI"},
	{rule: "fnc1: no AI starts the data", in: "^ABC", err: CodeInvalidIdentifier, inErr: "no GS1 AI"},
	{rule: "fnc1: unknown AI", in: "^2345", err: CodeInvalidIdentifier, inErr: "no GS1 AI"},
	{rule: "fnc1: empty variable value", in: "^10" + gsc + "17261231", err: CodeInvalidIdentifier, inErr: "no value"},
	{rule: "empty", in: "", err: CodeInvalidIdentifier, inErr: "empty"},
	{rule: "length: longer than 4096", in: "(01)" + g14 + "(10)" + strings.Repeat("A", 4100), err: CodeInvalidIdentifier, inErr: "4096"},

	// Across elements.
	{rule: "repeats: the same AI with the same value is merged", in: "(01)" + g14 + "(10)AB(01)" + g14, elems: "01=" + g14 + " 10=AB"},
	{rule: "repeats: the same AI with another value", in: "(01)" + g14 + "(10)AB(10)CD", err: CodeInvalidIdentifier, inErr: "different values"},
	{rule: "ex=: GTIN with COUNT", in: "(01)" + g14 + "(37)5", err: CodeInvalidIdentifier, inErr: "may not appear together"},
	{rule: "digsig: 8030 with a GDTI without serial", in: "(253)9520123456788(8030)abcd", err: CodeInvalidIdentifier, inErr: "serial"},
	{rule: "digsig: 8030 with a serialised GDTI", in: "(253)9520123456788X1(8030)abcd", elems: "253=9520123456788X1 8030=abcd", primary: "253=9520123456788X1"},
	{rule: "req=: lot without a GTIN is a warning", in: "(414)" + gln + "(10)AB", elems: "414=" + gln + " 10=AB", primary: "414=" + gln, warns: WarnRequisiteAIMissing},

	// Primary key and Digital Link.
	{rule: "primary: the first primary key, SSCC with content", in: "(00)095201234567891235(02)" + g14 + "(37)10", primary: "00=095201234567891235", elems: "00=095201234567891235 02=" + g14 + " 37=10",
		dl: idg + "/00/095201234567891235?02=" + g14 + "&37=10"},
	{rule: "primary: none (content and count only)", in: "(02)" + g14 + "(37)10", elems: "02=" + g14 + " 37=10", dl: "-", warns: WarnRequisiteAIMissing + " " + WarnNoDigitalLink},
	{rule: "primary: the key the others can accompany (8019 qualifies 8017, not 415)", in: "(415)" + gln + "(8019)42(8017)952012345678901233", primary: "8017=952012345678901233",
		dl: idg + "/8017/952012345678901233/8019/42?415=" + gln, warns: WarnRequisiteAIMissing},
	{rule: "digital link: qualifiers go in the path in their order", in: "(01)" + g14 + "(21)S1(10)L1(22)V", dl: idg + "/01/" + g14 + "/22/V/10/L1/21/S1", elems: "01=" + g14 + " 21=S1 10=L1 22=V"},
	{rule: "digital link: 235 alternative, 10 as an attribute", in: "(01)" + g14 + "(235)T1(10)L1", dl: idg + "/01/" + g14 + "/235/T1?10=L1", elems: "01=" + g14 + " 235=T1 10=L1"},
	{rule: "digital link: an AI not allowed as an attribute", in: "(414)" + gln + "(21)S1", elems: "414=" + gln + " 21=S1", dl: "-", warns: WarnRequisiteAIMissing + " " + WarnNoDigitalLink},
	{rule: "digital link: a second primary key is an attribute", in: "(01)" + g14 + "(414)" + gln, dl: idg + "/01/" + g14 + "?414=" + gln, elems: "01=" + g14 + " 414=" + gln},
}

func TestParseElementString(t *testing.T) {
	for _, tc := range esCases {
		t.Run(tc.rule, func(t *testing.T) {
			es, err := ParseElementString(tc.in)
			if tc.err != "" {
				var e *Error
				if !errors.As(err, &e) || e.Code != tc.err {
					t.Fatalf("ParseElementString(%q) = %+v, %v; want code %s", tc.in, es, err, tc.err)
				}
				if e.Detail == "" || len(e.Detail) > maxDetail || !strings.Contains(e.Detail, tc.inErr) {
					t.Errorf("detail %q should hold %q", e.Detail, tc.inErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseElementString(%q): %v", tc.in, err)
			}
			if tc.primary != "" && (es.Primary == nil || elemText([]Element{*es.Primary}) != tc.primary) {
				t.Errorf("primary = %+v, want %s", es.Primary, tc.primary)
			}
			if got := elemText(es.Elements); tc.elems != "" && got != tc.elems {
				t.Errorf("elements = %q, want %q", got, tc.elems)
			}
			if got := warningCodes(es.Warnings); got != tc.warns {
				t.Errorf("warnings = %q, want %q (%v)", got, tc.warns, es.Warnings)
			}
			if tc.es != "" && es.ElementString != tc.es {
				t.Errorf("element string = %q, want %q", es.ElementString, tc.es)
			}
			switch tc.dl {
			case "":
			case "-":
				if es.DigitalLink != "" {
					t.Errorf("digital link %q, want none", es.DigitalLink)
				}
			default:
				if es.DigitalLink != tc.dl {
					t.Errorf("digital link = %q, want %q", es.DigitalLink, tc.dl)
				}
			}
			if tc.form != "" && es.Form != tc.form {
				t.Errorf("form %q, want %q", es.Form, tc.form)
			}
			if es.SymbologyIdentifier != tc.sym {
				t.Errorf("symbology %q, want %q", es.SymbologyIdentifier, tc.sym)
			}
			checkElementStringShape(t, es)
		})
	}
}

// checkElementStringShape checks what holds of every parsed element string:
// the bracketed form parses to the same elements, and the Digital Link,
// when there is one, parses to the same set of AIs.
func checkElementStringShape(t *testing.T, es *ElementString) {
	t.Helper()
	if len(es.Elements) == 0 {
		t.Fatal("no elements")
	}
	for _, e := range es.Elements {
		if e.Name == "" {
			t.Errorf("element %s without a name", e.AI)
		}
	}
	if _, err := json.Marshal(es); err != nil {
		t.Error(err)
	}
	again, err := ParseElementString(es.ElementString)
	if err != nil {
		t.Fatalf("bracketed form %q does not parse: %v", es.ElementString, err)
	}
	if elemText(again.Elements) != elemText(es.Elements) || again.ElementString != es.ElementString || again.DigitalLink != es.DigitalLink {
		t.Fatalf("bracketed form %q reads differently: %q", es.ElementString, elemText(again.Elements))
	}
	if es.DigitalLink == "" {
		if !strings.Contains(warningCodes(es.Warnings), WarnNoDigitalLink) {
			t.Error("no digital link and no warning saying why")
		}
		return
	}
	l, err := ParseDigitalLink(es.DigitalLink)
	if err != nil {
		t.Fatalf("digital link %q does not parse: %v", es.DigitalLink, err)
	}
	if got, want := sortedAIs(append(append([]Element{l.Primary}, l.Qualifiers...), l.Attributes...)), sortedAIs(es.Elements); got != want {
		t.Fatalf("digital link %q gives %s, want %s", es.DigitalLink, got, want)
	}
	if *es.Primary != l.Primary {
		t.Fatalf("primary %+v, digital link's %+v", *es.Primary, l.Primary)
	}
	back, err := ParseElementString(l.ElementString)
	if err != nil {
		t.Fatalf("the link's element string %q does not parse: %v", l.ElementString, err)
	}
	if sortedAIs(back.Elements) != sortedAIs(es.Elements) {
		t.Fatalf("link's element string %q gives %s", l.ElementString, sortedAIs(back.Elements))
	}
}

func sortedAIs(es []Element) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.AI + "=" + e.Value
	}
	slices.Sort(parts)
	return strings.Join(parts, " ")
}

func TestLooksLikeElementString(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"(01)" + g14, true},
		{"]C1" + "01" + g14, true},
		{"01" + g14 + gsc + "10A", true},
		{"^01" + g14, true},
		{g14, false},
		{"01" + g14, false},
		{"ABC-123", false},
		{"gtin:" + g14, false},
		{"", false},
	}
	for _, tc := range tests {
		if got := LooksLikeElementString(tc.in); got != tc.want {
			t.Errorf("LooksLikeElementString(%q) = %v", tc.in, got)
		}
	}
}

// TestAIsPrefixFree checks what readFNC1 relies on: no AI is a prefix of
// another, so the data names its AI without a separator.
func TestAIsPrefixFree(t *testing.T) {
	for _, a := range aiTable {
		for _, b := range aiTable {
			if a.ai != b.ai && strings.HasPrefix(b.ai, a.ai) {
				t.Errorf("AI %s is a prefix of AI %s", a.ai, b.ai)
			}
		}
		if len(a.qualifiers) > 4 {
			t.Errorf("AI %s has %d qualifier alternatives; digitalLinkOrder handles 4", a.ai, len(a.qualifiers))
		}
	}
}

// Property: for random valid AI sets built from the dictionary (a primary
// key, qualifiers of one alternative, data attributes), written as an
// element string in either form, element string → parse → Digital Link →
// parse gives the same AIs, and back to an element string again.
func TestPropertyElementStringRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var keys, attrs []*aiDef
	for i := range aiTable {
		if aiTable[i].dlpkey {
			keys = append(keys, &aiTable[i])
		}
		if aiTable[i].dlAttr {
			attrs = append(attrs, &aiTable[i])
		}
	}
	checked := 0
	for i := 0; i < 4000; i++ {
		elems := randAISet(r, keys, attrs)
		in := writeElements(r, elems)
		es, err := ParseElementString(in)
		if err != nil {
			// A random pairing the rules refuse (ex=, DIGSIG without a
			// serialised key): the Digital Link must refuse it too.
			if _, dlErr := ParseDigitalLink(linkOf(elems)); dlErr == nil {
				t.Fatalf("%q refused (%v) but its Digital Link %q parses", in, err, linkOf(elems))
			}
			continue
		}
		if es.DigitalLink == "" {
			t.Fatalf("%q: no digital link: %v", in, es.Warnings)
		}
		checkElementStringShape(t, es)
		want := make([]Element, len(elems))
		for k, e := range elems {
			want[k] = Element{AI: e.def.ai, Value: e.value}
		}
		if sortedAIs(es.Elements) != sortedAIs(want) {
			t.Fatalf("%q gives %s, want %s", in, sortedAIs(es.Elements), sortedAIs(want))
		}
		checked++
	}
	if checked < 2000 {
		t.Fatalf("only %d of the random sets were valid; the generator is off", checked)
	}
}

// randAISet builds a primary key with a valid value, some qualifiers of one
// alternative in order, and some data attributes, each AI once.
func randAISet(r *rand.Rand, keys, attrs []*aiDef) []element {
	pk := keys[r.IntN(len(keys))]
	elems := []element{{pk, randValue(r, pk)}}
	used := map[string]bool{pk.ai: true}
	if len(pk.qualifiers) > 0 {
		alt := pk.qualifiers[r.IntN(len(pk.qualifiers))]
		for _, q := range alt {
			if r.IntN(2) == 0 {
				d := lookupAI(q)
				elems = append(elems, element{d, randValue(r, d)})
				used[q] = true
			}
		}
	}
	for n := r.IntN(5); n > 0; n-- {
		d := attrs[r.IntN(len(attrs))]
		if used[d.ai] || belongsInPath(pk, pathOf(elems), d.ai) {
			continue
		}
		used[d.ai] = true
		elems = append(elems, element{d, randValue(r, d)})
	}
	return elems
}

func pathOf(elems []element) []string {
	var p []string
	for _, e := range elems[1:] {
		if !e.def.dlAttr || inQualifiers(elems[0].def, e.def.ai) {
			p = append(p, e.def.ai)
		}
	}
	return p
}

func inQualifiers(pd *aiDef, ai string) bool {
	for _, alt := range pd.qualifiers {
		if indexOf(alt, ai) >= 0 {
			return true
		}
	}
	return false
}

// writeElements writes the elements, shuffled, as a bracketed string or as
// scanner data (with or without a symbology identifier).
func writeElements(r *rand.Rand, elems []element) string {
	elems = slices.Clone(elems)
	r.Shuffle(len(elems), func(i, j int) { elems[i], elems[j] = elems[j], elems[i] })
	var b strings.Builder
	if r.IntN(2) == 0 {
		for _, e := range elems {
			b.WriteString("(" + e.def.ai + ")" + strings.ReplaceAll(e.value, "(", `\(`))
		}
		return b.String()
	}
	b.WriteString([]string{"", "]C1", "]d2", "]Q3", "^"}[r.IntN(5)])
	for i, e := range elems {
		b.WriteString(e.def.ai + e.value)
		if !e.def.fixedLen && i < len(elems)-1 {
			b.WriteByte(gs)
		}
	}
	return b.String()
}

// linkOf writes elems (primary, qualifiers, attributes) as a Digital Link.
func linkOf(elems []element) string {
	var b strings.Builder
	b.WriteString(idg)
	q := false
	for i, e := range elems {
		if i == 0 || !e.def.dlAttr || inQualifiers(elems[0].def, e.def.ai) {
			b.WriteString("/" + e.def.ai + "/")
		} else {
			if q {
				b.WriteByte('&')
			} else {
				b.WriteByte('?')
				q = true
			}
			b.WriteString(e.def.ai + "=")
		}
		writeEscaped(&b, e.value)
	}
	return b.String()
}

func TestElementStringJSONShape(t *testing.T) {
	es, err := ParseElementString("(01)" + g14 + "(10)AB")
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(es)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"input":"(01)09520123456788(10)AB","form":"bracketed","primary":{"ai":"01","name":"GTIN","value":"09520123456788","subject":"gtin:09520123456788"},"elements":[{"ai":"01","name":"GTIN","value":"09520123456788","subject":"gtin:09520123456788"},{"ai":"10","name":"BATCH/LOT","value":"AB"}],"element_string":"(01)09520123456788(10)AB","digital_link":"https://id.gs1.org/01/09520123456788/10/AB"}`
	if string(b) != want {
		t.Errorf("JSON\n got %s\nwant %s", b, want)
	}
}

// TestMoreThan64AIs checks pds's choice against the reference engine's
// limit of 64 AIs: a Digital Link URI and an element string with more are
// read, bounded only by their length limits.
func TestMoreThan64AIs(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	pk := lookupAI("00")
	elems := []element{{pk, "095201234567891235"}}
	for i := range aiTable {
		d := &aiTable[i]
		if !d.dlAttr || d.dlpkey || len(d.ex) > 0 || len(elems) > 70 {
			continue
		}
		try := append(slices.Clone(elems), element{d, randValue(r, d)})
		if _, err := ParseDigitalLink(linkOf(try)); err == nil {
			elems = try
		}
	}
	if len(elems) <= 64 {
		t.Fatalf("only %d AIs could be combined", len(elems))
	}
	l, err := ParseDigitalLink(linkOf(elems))
	if err != nil || len(l.Attributes)+1 != len(elems) {
		t.Fatalf("a URI with %d AIs: %v", len(elems), err)
	}
	es, err := ParseElementString(l.ElementString)
	if err != nil || len(es.Elements) != len(elems) {
		t.Fatalf("an element string with %d AIs: %v", len(elems), err)
	}
}
