package domain

// Validation classes and their allowed verdict values (spec 2.5).
const (
	ClassTechnical  = "technical"
	ClassBusiness   = "business"
	ClassRegulatory = "regulatory"
	ClassAuthority  = "authority"
)

// VerdictValues maps each validation class to its allowed values.
var VerdictValues = map[string][]string{
	ClassTechnical:  {"pass", "fail", "warn", "not_assessed"},
	ClassBusiness:   {"pass", "fail", "warn", "not_assessed"},
	ClassRegulatory: {"pass", "fail", "warn", "not_assessed"},
	ClassAuthority:  {"none", "attested"},
}

// Verdict is one evaluated validation rule (an input line of verdicts.ndjson).
type Verdict struct {
	Subject     string  `json:"subject"`
	Class       string  `json:"class"`
	Value       string  `json:"value"`
	Rule        *string `json:"rule,omitempty"`
	EvaluatedAt string  `json:"evaluated_at"`
}

// Validation holds up to four independent axes; an axis no rule was
// evaluated for is absent.
type Validation struct {
	Technical  string `json:"technical,omitempty"`
	Business   string `json:"business,omitempty"`
	Regulatory string `json:"regulatory,omitempty"`
	Authority  string `json:"authority,omitempty"`
}

// Set records the value of one class.
func (v *Validation) Set(class, value string) {
	switch class {
	case ClassTechnical:
		v.Technical = value
	case ClassBusiness:
		v.Business = value
	case ClassRegulatory:
		v.Regulatory = value
	case ClassAuthority:
		v.Authority = value
	}
}

// Empty reports whether no axis is set.
func (v Validation) Empty() bool { return v == Validation{} }
