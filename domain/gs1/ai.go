package gs1

// aiDef is one GS1 Application Identifier as the Barcode Syntax Dictionary
// describes it. aitable.go (generated) holds them all.
type aiDef struct {
	ai         string
	title      string
	fixedLen   bool         // '*': predefined length
	dlAttr     bool         // '?': allowed as a Digital Link data attribute
	comps      []aiComp     // the format, read left to right
	req        [][][]string // each req= attribute: alternatives, each a group of AIs or patterns that must all be present
	ex         []string     // AIs or patterns that may not appear with this one
	dlpkey     bool         // a Digital Link primary key
	qualifiers [][]string   // alternative ordered sequences of optional key qualifiers
}

// aiComp is one component of an AI's format.
type aiComp struct {
	cset     byte // 'N' digits, 'X' CSET 82, 'Y' CSET 39, 'Z' base64url
	min, max uint8
	optional bool
	linters  []string
}

// aiIndex finds an AI by its digits: aiIndex[n-2][value] for an AI of n
// digits. Arrays rather than a map keep lookups cheap on the parse path.
var aiIndex = func() (idx [3][]*aiDef) {
	idx[0] = make([]*aiDef, 100)
	idx[1] = make([]*aiDef, 1000)
	idx[2] = make([]*aiDef, 10000)
	for i := range aiTable {
		d := &aiTable[i]
		if d.title == "" {
			// The dictionary gives AIs 8110 and 8112 (North American
			// coupons) no data title; name them after their content.
			d.title = untitled[d.ai]
		}
		idx[len(d.ai)-2][num(d.ai)] = d
	}
	return idx
}()

// untitled names the AIs that have no data title in the dictionary.
var untitled = map[string]string{
	"8110": "COUPON CODE (NORTH AMERICA)",
	"8112": "PAPERLESS COUPON CODE (NORTH AMERICA)",
}

// lookupAI returns the AI named s (2 to 4 ASCII digits), or nil.
func lookupAI(s string) *aiDef {
	if len(s) < 2 || len(s) > 4 || !isDigits(s) {
		return nil
	}
	return aiIndex[len(s)-2][num(s)]
}
