package gs1

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// dlCase is one ParseDigitalLink call. Element lists are "AI=value" words
// separated by spaces; warns and ignored are space-separated. An empty
// stem, es or canon is not checked.
type dlCase struct {
	rule    string
	uri     string
	err     string // error code, "" for success
	primary string
	quals   string
	attrs   string
	ignored string
	warns   string
	stem    string
	es      string
	canon   string
	inErr   string // a phrase the error detail must hold
}

const (
	g14 = "09520123456788" // a valid GTIN in its 14-digit form
	gln = "9520123456788"  // a valid GLN
	idg = "https://id.gs1.org"
)

var dlCases = []dlCase{
	// The sixteen primary keys.
	{rule: "primary key 00 SSCC", uri: idg + "/00/095201234567891235", primary: "00=095201234567891235", es: "(00)095201234567891235"},
	{rule: "primary key 01 GTIN", uri: idg + "/01/" + g14, primary: "01=" + g14, es: "(01)" + g14, canon: idg + "/01/" + g14, stem: idg},
	{rule: "primary key 253 GDTI with serial", uri: idg + "/253/9520123456788DOC-1", primary: "253=9520123456788DOC-1"},
	{rule: "primary key 253 GDTI without serial", uri: idg + "/253/9520123456788", primary: "253=9520123456788"},
	{rule: "primary key 255 GCN", uri: idg + "/255/9520123456788123", primary: "255=9520123456788123"},
	{rule: "primary key 401 GINC", uri: idg + "/401/9520123ABC", primary: "401=9520123ABC"},
	{rule: "primary key 402 GSIN", uri: idg + "/402/95201234567890122", primary: "402=95201234567890122"},
	{rule: "primary key 414 GLN", uri: idg + "/414/" + gln, primary: "414=" + gln},
	{rule: "primary key 415 pay-to GLN (its req=8020 partner missing)", uri: idg + "/415/" + gln, primary: "415=" + gln, warns: WarnRequisiteAIMissing},
	{rule: "primary key 417 party GLN", uri: idg + "/417/" + gln, primary: "417=" + gln},
	{rule: "primary key 8003 GRAI", uri: idg + "/8003/09520123456788ASSET1", primary: "8003=09520123456788ASSET1"},
	{rule: "primary key 8004 GIAI", uri: idg + "/8004/9520123ABC", primary: "8004=9520123ABC"},
	{rule: "primary key 8006 ITIP", uri: idg + "/8006/" + g14 + "0102", primary: "8006=" + g14 + "0102"},
	{rule: "primary key 8010 CPID", uri: idg + "/8010/9520123-AB%2F1%23", primary: "8010=9520123-AB/1#"},
	{rule: "primary key 8013 GMN", uri: idg + "/8013/1987654Ad4X4bL5ttr2310c2K", primary: "8013=1987654Ad4X4bL5ttr2310c2K"},
	{rule: "primary key 8017 GSRN provider", uri: idg + "/8017/952012345678901233", primary: "8017=952012345678901233"},
	{rule: "primary key 8018 GSRN recipient", uri: idg + "/8018/952012345678901233", primary: "8018=952012345678901233"},

	// Check digits and formats of primary keys.
	{rule: "csum: SSCC check digit", uri: idg + "/00/095201234567891236", err: CodeInvalidIdentifier, inErr: "check digit"},
	{rule: "csum: GTIN check digit", uri: idg + "/01/09520123456789", err: CodeInvalidIdentifier, inErr: "should be 8"},
	{rule: "csum: GDTI check digit", uri: idg + "/253/9520123456789DOC", err: CodeInvalidIdentifier},
	{rule: "csum: GCN check digit", uri: idg + "/255/9520123456789123", err: CodeInvalidIdentifier},
	{rule: "format: GCN serial part is numeric", uri: idg + "/255/9520123456788A", err: CodeInvalidIdentifier},
	{rule: "csum: GSIN check digit", uri: idg + "/402/95201234567890123", err: CodeInvalidIdentifier},
	{rule: "csum: GLN check digit", uri: idg + "/414/9520123456781", err: CodeInvalidIdentifier},
	{rule: "csum: party GLN check digit", uri: idg + "/417/9520123456781", err: CodeInvalidIdentifier},
	{rule: "csum: GRAI check digit inside the second component", uri: idg + "/8003/09520123456789ASSET1", err: CodeInvalidIdentifier},
	{rule: "format: GRAI starts with the digit 0 (linter zero)", uri: idg + "/8003/19520123456788", err: CodeInvalidIdentifier, inErr: "must be 0"},
	{rule: "csum: ITIP check digit", uri: idg + "/8006/095201234567890102", err: CodeInvalidIdentifier},
	{rule: "pieceoftotal: piece greater than total", uri: idg + "/8006/" + g14 + "0301", err: CodeInvalidIdentifier, inErr: "piece"},
	{rule: "pieceoftotal: piece zero", uri: idg + "/8006/" + g14 + "0002", err: CodeInvalidIdentifier},
	{rule: "format: CPID is CSET 39 (no lower case)", uri: idg + "/8010/9520123abc", err: CodeInvalidIdentifier, inErr: "CSET 39"},
	{rule: "csumalpha: GMN check pair", uri: idg + "/8013/1987654Ad4X4bL5ttr2310c2L", err: CodeInvalidIdentifier, inErr: "2K"},
	{rule: "csumalpha: GMN too short for its pair", uri: idg + "/8013/2K", err: CodeInvalidIdentifier},
	{rule: "csum: GSRN check digit", uri: idg + "/8018/952012345678901234", err: CodeInvalidIdentifier},
	{rule: "format: GTIN of 15 digits", uri: idg + "/01/095201234567880", err: CodeInvalidIdentifier},
	{rule: "format: GTIN with a letter", uri: idg + "/01/0952012345678A", err: CodeInvalidIdentifier},
	{rule: "format: GIAI longer than 30", uri: idg + "/8004/" + strings.Repeat("9", 31), err: CodeInvalidIdentifier, inErr: "too long"},
	{rule: "format: GINC with a character outside CSET 82", uri: idg + "/401/9520123%7E", err: CodeInvalidIdentifier, inErr: "CSET 82"},

	// Zero-suppressed GTINs.
	{rule: "warning ZERO_SUPPRESSED_GTIN: GTIN-13", uri: idg + "/01/9520123456788", primary: "01=" + g14, warns: WarnZeroSuppressedGTIN, canon: idg + "/01/" + g14},
	{rule: "warning ZERO_SUPPRESSED_GTIN: GTIN-12", uri: idg + "/01/036000291452", primary: "01=00036000291452", warns: WarnZeroSuppressedGTIN},
	{rule: "warning ZERO_SUPPRESSED_GTIN: GTIN-8", uri: idg + "/01/96385074", primary: "01=00000096385074", warns: WarnZeroSuppressedGTIN, es: "(01)00000096385074"},
	{rule: "zero-suppressed GTIN still needs its check digit", uri: idg + "/01/9520123456789", err: CodeInvalidIdentifier},
	{rule: "GTIN of 11 digits is not zero-suppressed, just wrong", uri: idg + "/01/03600029145", err: CodeInvalidIdentifier},
	{rule: "primary subject is the canonical GTIN", uri: idg + "/01/96385074", primary: "01=00000096385074", warns: WarnZeroSuppressedGTIN},

	// Qualifiers.
	{rule: "qualifiers: full GTIN sequence 22,10,21", uri: idg + "/01/" + g14 + "/22/2A/10/ABC123/21/S1", primary: "01=" + g14, quals: "22=2A 10=ABC123 21=S1", es: "(01)" + g14 + "(22)2A(10)ABC123(21)S1"},
	{rule: "qualifiers: skipping one keeps order valid", uri: idg + "/01/" + g14 + "/22/2A/21/S1", primary: "01=" + g14, quals: "22=2A 21=S1"},
	{rule: "qualifiers: lot only", uri: idg + "/01/" + g14 + "/10/L1", primary: "01=" + g14, quals: "10=L1"},
	{rule: "qualifiers: second alternative 235", uri: idg + "/01/" + g14 + "/235/TPX1", primary: "01=" + g14, quals: "235=TPX1"},
	{rule: "qualifiers: wrong order is an error", uri: idg + "/01/" + g14 + "/21/S1/10/L1", err: CodeInvalidIdentifier, inErr: "order"},
	{rule: "qualifiers: 22 after 10 is out of order", uri: idg + "/01/" + g14 + "/10/L1/22/2A", err: CodeInvalidIdentifier, inErr: "order"},
	{rule: "qualifiers: alternatives cannot be mixed", uri: idg + "/01/" + g14 + "/22/2A/235/T", err: CodeInvalidIdentifier, inErr: "different qualifier sequences"},
	{rule: "qualifiers: 235 then 21 mixes alternatives", uri: idg + "/01/" + g14 + "/235/T/21/S", err: CodeInvalidIdentifier},
	{rule: "qualifiers: duplicate qualifier", uri: idg + "/01/" + g14 + "/10/L1/10/L2", err: CodeInvalidIdentifier, inErr: "twice"},
	{rule: "qualifiers: a data attribute AI in the path", uri: idg + "/01/" + g14 + "/17/261231", err: CodeInvalidIdentifier, inErr: "not a key qualifier"},
	{rule: "qualifiers: a key with no qualifiers", uri: idg + "/00/095201234567891235/10/L", err: CodeInvalidIdentifier, inErr: "takes no qualifiers"},
	{rule: "qualifiers: GLN extension 254", uri: idg + "/414/" + gln + "/254/32a%2Fb", primary: "414=" + gln, quals: "254=32a/b", canon: idg + "/414/" + gln + "/254/32a%2Fb"},
	{rule: "qualifiers: GLN alternative 7040", uri: idg + "/414/" + gln + "/7040/1ABC", primary: "414=" + gln, quals: "7040=1ABC"},
	{rule: "qualifiers: GLN 254 and 7040 are alternatives", uri: idg + "/414/" + gln + "/254/1/7040/1ABC", err: CodeInvalidIdentifier},
	{rule: "importeridx: last character of 7040", uri: idg + "/417/" + gln + "/7040/1AB%21", err: CodeInvalidIdentifier, inErr: "importer index"},
	{rule: "qualifiers: 417 with 7040", uri: idg + "/417/" + gln + "/7040/9xy_", primary: "417=" + gln, quals: "7040=9xy_"},
	{rule: "qualifiers: 415 with 8020 satisfies its req", uri: idg + "/415/" + gln + "/8020/REF1", primary: "415=" + gln, quals: "8020=REF1"},
	{rule: "qualifiers: 8004 with 7040", uri: idg + "/8004/9520123ABC/7040/1ABC", primary: "8004=9520123ABC", quals: "7040=1ABC"},
	{rule: "qualifiers: ITIP sequence", uri: idg + "/8006/" + g14 + "0102/22/A/10/B/21/C", primary: "8006=" + g14 + "0102", quals: "22=A 10=B 21=C", warns: WarnRequisiteAIMissing},
	{rule: "qualifiers: CPID serial 8011", uri: idg + "/8010/9520123ABC/8011/123", primary: "8010=9520123ABC", quals: "8011=123"},
	{rule: "nozeroprefix: CPID serial may not start with 0", uri: idg + "/8010/9520123ABC/8011/0123", err: CodeInvalidIdentifier, inErr: "starts with 0"},
	{rule: "nozeroprefix: CPID serial 0 alone is refused too (as the reference engine does)", uri: idg + "/8010/9520123ABC/8011/0", err: CodeInvalidIdentifier, inErr: "starts with 0"},
	{rule: "gcppos1: a GIAI starts with four digits of a company prefix", uri: idg + "/8004/ABC123", err: CodeInvalidIdentifier, inErr: "Company Prefix"},
	{rule: "gcppos1: a CPID starts with four digits of a company prefix", uri: idg + "/8010/952A", err: CodeInvalidIdentifier, inErr: "Company Prefix"},
	{rule: "gcppos1: a GMN starts with four digits of a company prefix", uri: idg + "/8013/ABCD1234XY", err: CodeInvalidIdentifier},
	{rule: "qualifiers: GSRN with SRIN 8019", uri: idg + "/8018/952012345678901233/8019/42", primary: "8018=952012345678901233", quals: "8019=42"},
	{rule: "qualifiers: provider GSRN with SRIN 8019", uri: idg + "/8017/952012345678901233/8019/42", primary: "8017=952012345678901233", quals: "8019=42"},
	{rule: "format: serial longer than 20", uri: idg + "/01/" + g14 + "/21/" + strings.Repeat("A", 21), err: CodeInvalidIdentifier, inErr: "too long"},
	{rule: "format: lot of exactly 20", uri: idg + "/01/" + g14 + "/10/" + strings.Repeat("A", 20), primary: "01=" + g14, quals: "10=" + strings.Repeat("A", 20)},
	{rule: "format: empty qualifier value", uri: idg + "/01/" + g14 + "/10//21/S", err: CodeInvalidIdentifier, inErr: "empty"},

	// Data attributes.
	{rule: "attributes: expiry date", uri: idg + "/01/" + g14 + "?17=261231", primary: "01=" + g14, attrs: "17=261231", canon: idg + "/01/" + g14 + "?17=261231"},
	{rule: "attributes: URI order is kept", uri: idg + "/01/" + g14 + "/10/L?3103=000195&17=261231&15=260100", primary: "01=" + g14, quals: "10=L", attrs: "3103=000195 17=261231 15=260100", es: "(01)" + g14 + "(10)L(3103)000195(17)261231(15)260100"},
	{rule: "attributes: belongs in the path (/01/X?10=L)", uri: idg + "/01/" + g14 + "?10=L", err: CodeInvalidIdentifier, inErr: "in the path"},
	{rule: "attributes: belongs in the path after 21", uri: idg + "/01/" + g14 + "/21/S?10=L", err: CodeInvalidIdentifier, inErr: "in the path"},
	{rule: "attributes: 10 cannot join the 235 alternative, so it is an attribute", uri: idg + "/01/" + g14 + "/235/T?10=L", primary: "01=" + g14, quals: "235=T", attrs: "10=L"},
	{rule: "attributes: 10 after a 22,10,21 path that already passed 10's slot", uri: idg + "/8006/" + g14 + "0102?10=L", err: CodeInvalidIdentifier, inErr: "in the path"},
	{rule: "attributes: qualifier AI without the ? flag", uri: idg + "/01/" + g14 + "?21=S", err: CodeInvalidIdentifier, inErr: "not permitted as a data attribute"},
	{rule: "attributes: unknown all-digit key", uri: idg + "/01/" + g14 + "?9999=1", err: CodeInvalidIdentifier, inErr: "no GS1 AI"},
	{rule: "attributes: another primary key as an attribute is fine", uri: idg + "/01/" + g14 + "?414=" + gln, primary: "01=" + g14, attrs: "414=" + gln},
	{rule: "attributes: the same AI twice in the query (go trap: duplicate keys)", uri: idg + "/01/" + g14 + "?17=261231&17=261230", err: CodeInvalidIdentifier, inErr: "twice"},
	{rule: "attributes: the primary AI again in the query", uri: idg + "/01/" + g14 + "?01=" + g14, err: CodeInvalidIdentifier, inErr: "twice"},
	{rule: "attributes: a qualifier again in the query", uri: idg + "/01/" + g14 + "/235/T?235=T", err: CodeInvalidIdentifier},
	{rule: "attributes: value checked against its format", uri: idg + "/01/" + g14 + "?3103=12", err: CodeInvalidIdentifier, inErr: "too short"},
	{rule: "attributes: empty value", uri: idg + "/01/" + g14 + "?17=", err: CodeInvalidIdentifier, inErr: "empty"},
	{rule: "query: a parameter without = is ignored, as the reference engine does", uri: idg + "/01/" + g14 + "?17", primary: "01=" + g14, ignored: "17"},
	{rule: "query: ?93=x&99, the 99 without = is ignored", uri: idg + "/01/" + g14 + "?93=x&99", primary: "01=" + g14, attrs: "93=x", ignored: "99"},
	{rule: "query: a trailing &17 is not a second 17", uri: idg + "/01/" + g14 + "?17=261231&17", primary: "01=" + g14, attrs: "17=261231", ignored: "17"},
	{rule: "query: a bare word is ignored", uri: idg + "/01/" + g14 + "?debug", primary: "01=" + g14, ignored: "debug"},
	{rule: "yymmd0: day 00 is the end of the month", uri: idg + "/01/" + g14 + "?15=261200", primary: "01=" + g14, attrs: "15=261200"},
	{rule: "yymmd0: month 13 does not exist", uri: idg + "/01/" + g14 + "?17=261301", err: CodeInvalidIdentifier, inErr: "month"},
	{rule: "yymmd0: 30 February does not exist", uri: idg + "/01/" + g14 + "?17=260230", err: CodeInvalidIdentifier, inErr: "day"},
	{rule: "yymmd0: 29 February in a leap year", uri: idg + "/01/" + g14 + "?17=280229", primary: "01=" + g14, attrs: "17=280229"},
	{rule: "yymmd0: 29 February outside a leap year", uri: idg + "/01/" + g14 + "?17=270229", err: CodeInvalidIdentifier},
	{rule: "yymmdd: first freeze date day 00 is not allowed", uri: idg + "/01/" + g14 + "?7006=260100", err: CodeInvalidIdentifier, inErr: "day"},
	{rule: "yymmdd: first freeze date", uri: idg + "/01/" + g14 + "?7006=260131", primary: "01=" + g14, attrs: "7006=260131"},
	{rule: "hhmi: expiry time", uri: idg + "/01/" + g14 + "?7003=2612312359", primary: "01=" + g14, attrs: "7003=2612312359"},
	{rule: "hhmi: hour 24 does not exist", uri: idg + "/01/" + g14 + "?7003=2612312400", err: CodeInvalidIdentifier, inErr: "HHMI"},
	{rule: "iso3166: country of origin", uri: idg + "/01/" + g14 + "?422=276", primary: "01=" + g14, attrs: "422=276"},
	{rule: "iso3166: unknown country code", uri: idg + "/01/" + g14 + "?422=999", err: CodeInvalidIdentifier, inErr: "ISO 3166"},
	{rule: "iso3166: every optional component is checked", uri: idg + "/01/" + g14 + "?423=276250001", err: CodeInvalidIdentifier, inErr: "ISO 3166"},
	{rule: "iso3166: several countries", uri: idg + "/01/" + g14 + "?423=276250380", primary: "01=" + g14, attrs: "423=276250380"},
	{rule: "iso3166: an optional component left incomplete", uri: idg + "/01/" + g14 + "?423=27625", err: CodeInvalidIdentifier, inErr: "too short"},
	{rule: "iso4217: amount payable with currency", uri: idg + "/415/" + gln + "/8020/R1?3912=978123", primary: "415=" + gln, quals: "8020=R1", attrs: "3912=978123"},
	{rule: "iso4217: unknown currency", uri: idg + "/415/" + gln + "/8020/R1?3912=000123", err: CodeInvalidIdentifier, inErr: "ISO 4217"},
	{rule: "iso4217: 396 (XAD) is current", uri: idg + "/415/" + gln + "/8020/R1?3912=396123", primary: "415=" + gln, quals: "8020=R1", attrs: "3912=396123"},
	{rule: "iso4217: 191 (HRK) was withdrawn in 2023", uri: idg + "/415/" + gln + "/8020/R1?3912=191123", err: CodeInvalidIdentifier, inErr: "ISO 4217"},
	{rule: "iso4217: 932 (ZWL) was withdrawn in 2024", uri: idg + "/415/" + gln + "/8020/R1?3912=932123", err: CodeInvalidIdentifier, inErr: "ISO 4217"},
	{rule: "iso4217: 924 (ZWG) is current", uri: idg + "/415/" + gln + "/8020/R1?3912=924123", primary: "415=" + gln, quals: "8020=R1", attrs: "3912=924123"},
	{rule: "mediatype: AIDC media type 7241", uri: idg + "/8018/952012345678901233?7241=01", primary: "8018=952012345678901233", attrs: "7241=01"},
	{rule: "mediatype: reserved media type 50", uri: idg + "/8018/952012345678901233?7241=50", err: CodeInvalidIdentifier, inErr: "media type"},
	{rule: "couponcode: a valid 8110", uri: idg + "/01/" + g14 + "?8110=095201212345615110123", primary: "01=" + g14, attrs: "8110=095201212345615110123"},
	{rule: "couponcode: a truncated 8110", uri: idg + "/01/" + g14 + "?8110=0952012123456", err: CodeInvalidIdentifier, inErr: "coupon"},
	{rule: "couponposoffer: a valid 8112", uri: idg + "/01/" + g14 + "?8112=009520121234560123456", primary: "01=" + g14, attrs: "8112=009520121234560123456"},
	{rule: "couponposoffer: format code 2", uri: idg + "/01/" + g14 + "?8112=209520121234560123456", err: CodeInvalidIdentifier, inErr: "format code"},
	{rule: "digsig: 8030 with a serialised GDTI", uri: idg + "/253/9520123456788DOC1?8030=abcd", primary: "253=9520123456788DOC1", attrs: "8030=abcd"},
	{rule: "digsig: 8030 with a GDTI without serial", uri: idg + "/253/9520123456788?8030=abcd", err: CodeInvalidIdentifier, inErr: "serial"},
	{rule: "digsig: 8030 with a GCN without serial", uri: idg + "/255/9520123456788?8030=abcd", err: CodeInvalidIdentifier, inErr: "serial"},
	{rule: "digsig: 8030 with a GRAI without serial", uri: idg + "/8003/09520123456788?8030=abcd", err: CodeInvalidIdentifier, inErr: "serial"},
	{rule: "digsig: 8030 with a serialised GRAI", uri: idg + "/8003/09520123456788A1?8030=abcd", primary: "8003=09520123456788A1", attrs: "8030=abcd"},
	{rule: "digsig: 8030 with a GTIN and serial (req met)", uri: idg + "/01/" + g14 + "/21/S1?8030=ab%3D", primary: "01=" + g14, quals: "21=S1", attrs: "8030=ab="},
	{rule: "digsig: 8030 on a GTIN without serial is a requisite warning", uri: idg + "/01/" + g14 + "?8030=abcd", primary: "01=" + g14, attrs: "8030=abcd", warns: WarnRequisiteAIMissing},
	{rule: "digsig: 8030 padding must make a multiple of 3", uri: idg + "/253/9520123456788DOC1?8030=abc%3D", err: CodeInvalidIdentifier, inErr: "padding"},
	{rule: "iso3166alpha2: ship-to country", uri: idg + "/00/095201234567891235?4307=DE", primary: "00=095201234567891235", attrs: "4307=DE"},
	{rule: "iso3166alpha2: unknown country", uri: idg + "/00/095201234567891235?4307=XX", err: CodeInvalidIdentifier},
	{rule: "csum: GTIN as an attribute is checked", uri: idg + "/414/" + gln + "?01=09520123456789", err: CodeInvalidIdentifier},
	{rule: "csum: CONTENT GTIN attribute", uri: idg + "/00/095201234567891235?02=" + g14 + "&37=10", primary: "00=095201234567891235", attrs: "02=" + g14 + " 37=10"},

	// Exclusions and requisites.
	{rule: "ex=: GTIN with COUNT", uri: idg + "/01/" + g14 + "?37=5", err: CodeInvalidIdentifier, inErr: "may not appear together"},
	{rule: "ex=: two net weights of the same kind (310n)", uri: idg + "/01/" + g14 + "?3103=000195&3102=001950", err: CodeInvalidIdentifier, inErr: "may not appear together"},
	{rule: "ex=: net weight in kg and in lb are not exclusive", uri: idg + "/01/" + g14 + "?3103=000195&3202=000043", primary: "01=" + g14, attrs: "3103=000195 3202=000043"},
	{rule: "ex=: origin 422 with full process 426", uri: idg + "/01/" + g14 + "?422=276&426=276", err: CodeInvalidIdentifier},
	{rule: "ex=: GSRN provider and recipient", uri: idg + "/8017/952012345678901233?8018=952012345678901233", err: CodeInvalidIdentifier},
	{rule: "warning REQUISITE_AI_MISSING: lot without a GTIN", uri: idg + "/414/" + gln + "?10=L", primary: "414=" + gln, attrs: "10=L", warns: WarnRequisiteAIMissing},
	{rule: "warning REQUISITE_AI_MISSING: secondary serial needs 21 too", uri: idg + "/01/" + g14 + "?250=X", primary: "01=" + g14, attrs: "250=X", warns: WarnRequisiteAIMissing},
	{rule: "warning REQUISITE_AI_MISSING: met by a qualifier", uri: idg + "/01/" + g14 + "/21/S?250=X", primary: "01=" + g14, quals: "21=S", attrs: "250=X"},
	{rule: "warning REQUISITE_AI_MISSING: repeated req= groups both met", uri: idg + "/01/" + g14 + "?3922=12345&30=5", primary: "01=" + g14, attrs: "3922=12345 30=5"},
	{rule: "warning REQUISITE_AI_MISSING: pattern 31nn", uri: idg + "/01/" + g14 + "?3922=12345&3103=000195", primary: "01=" + g14, attrs: "3922=12345 3103=000195"},

	// Ignored parameters.
	{rule: "ignored: linkType", uri: idg + "/01/" + g14 + "?linkType=gs1:pip", primary: "01=" + g14, ignored: "linkType"},
	{rule: "ignored: several non-GS1 keys, each once, in order", uri: idg + "/01/" + g14 + "?utm_source=x&17=261231&linkType=a&utm_source=y", primary: "01=" + g14, attrs: "17=261231", ignored: "utm_source linkType", canon: idg + "/01/" + g14 + "?17=261231"},
	{rule: "ignored: empty parameters are skipped", uri: idg + "/01/" + g14 + "?&&17=261231&", primary: "01=" + g14, attrs: "17=261231"},
	{rule: "ignored: a key with a letter is not an AI", uri: idg + "/01/" + g14 + "?17a=1", primary: "01=" + g14, ignored: "17a"},
	{rule: "ignored: the fragment is ignored", uri: idg + "/01/" + g14 + "#section", primary: "01=" + g14, canon: idg + "/01/" + g14},
	{rule: "ignored: an empty query", uri: idg + "/01/" + g14 + "?", primary: "01=" + g14},

	// Percent-decoding and '+'.
	{rule: "go trap: %2F in a value stays inside the value", uri: idg + "/01/" + g14 + "/10/AB%2FC", primary: "01=" + g14, quals: "10=AB/C", es: "(01)" + g14 + "(10)AB/C", canon: idg + "/01/" + g14 + "/10/AB%2FC"},
	{rule: "go trap: + is literal in the path", uri: idg + "/01/" + g14 + "/10/A+B", primary: "01=" + g14, quals: "10=A+B", canon: idg + "/01/" + g14 + "/10/A%2BB"},
	{rule: "go trap: + is a space in the query, and space is not CSET 82", uri: idg + "/414/" + gln + "?10=A+B", err: CodeInvalidIdentifier, inErr: "' '"},
	{rule: "go trap: %2B is a literal + in the query", uri: idg + "/414/" + gln + "?10=A%2BB", primary: "414=" + gln, attrs: "10=A+B", warns: WarnRequisiteAIMissing},
	{rule: "go trap: + in an ignored key is a space", uri: idg + "/01/" + g14 + "?utm+source=1", primary: "01=" + g14, ignored: "utm source"},
	{rule: "percent: lower-case escapes", uri: idg + "/01/" + g14 + "/10/a%2fb", primary: "01=" + g14, quals: "10=a/b"},
	{rule: "percent: an escaped AI in the path is not an AI (as the reference engine reads it)", uri: idg + "/%30%31/" + g14, err: CodeNoPrimaryIdentifier, inErr: "write /01/"},
	{rule: "percent: an escaped AI in the stem position leaves the real key path", uri: idg + "/%30%31/x/01/" + g14, primary: "01=" + g14, stem: idg + "/%30%31/x"},
	{rule: "percent: an escaped qualifier AI is junk after the key", uri: idg + "/01/" + g14 + "/%31%30/L", err: CodeInvalidIdentifier},
	{rule: "percent: an escaped AI in the query is ignored with a warning", uri: idg + "/01/" + g14 + "?%39%36=W", primary: "01=" + g14, ignored: "96", warns: WarnEncodedAI},
	{rule: "percent: an escaped non-AI query name is just ignored", uri: idg + "/01/" + g14 + "?%41=1", primary: "01=" + g14, ignored: "A"},
	{rule: "percent: decoded value outside CSET 82", uri: idg + "/01/" + g14 + "/10/%C3%A9", err: CodeInvalidIdentifier, inErr: "CSET 82"},
	{rule: "percent: decoded NUL", uri: idg + "/01/" + g14 + "/10/A%00", err: CodeInvalidIdentifier},
	{rule: "percent: escaped digits of a GTIN", uri: idg + "/01/%30952012345678%38", primary: "01=" + g14},
	{rule: "percent: escaped = and & in a query value", uri: idg + "/414/" + gln + "?10=A%3DB%26C", primary: "414=" + gln, attrs: "10=A=B&C", warns: WarnRequisiteAIMissing, canon: idg + "/414/" + gln + "?10=A%3DB%26C"},

	// Stems, hosts, schemes.
	{rule: "stem: a path before the key path", uri: "https://example.com/some/prefix/01/" + g14, primary: "01=" + g14, stem: "https://example.com/some/prefix", canon: idg + "/01/" + g14},
	{rule: "stem: the rightmost primary key wins", uri: "https://example.com/01/" + g14 + "/414/" + gln, primary: "414=" + gln, stem: "https://example.com/01/" + g14},
	{rule: "stem: AI-like segments in the stem", uri: "https://example.com/10/x/01/" + g14 + "/10/L", primary: "01=" + g14, quals: "10=L", stem: "https://example.com/10/x"},
	{rule: "stem: stem with an odd number of segments", uri: "https://example.com/a/b/c/01/" + g14 + "/21/S", primary: "01=" + g14, quals: "21=S", stem: "https://example.com/a/b/c"},
	{rule: "host: http is accepted", uri: "http://id.gs1.org/01/" + g14, primary: "01=" + g14},
	{rule: "host: scheme and host in any case", uri: "HTTPS://ID.GS1.ORG/01/" + g14, primary: "01=" + g14, stem: "HTTPS://ID.GS1.ORG", canon: idg + "/01/" + g14},
	{rule: "host: port", uri: "https://example.com:8443/01/" + g14, primary: "01=" + g14, stem: "https://example.com:8443"},
	{rule: "host: IPv4", uri: "http://192.0.2.1/01/" + g14, primary: "01=" + g14},
	{rule: "host: IPv6 literal with port", uri: "http://[2001:db8::1]:8080/01/" + g14, primary: "01=" + g14, stem: "http://[2001:db8::1]:8080"},
	{rule: "host: punycode", uri: "https://xn--bcher-kva.example/01/" + g14, primary: "01=" + g14},
	{rule: "host: fully qualified with trailing dot", uri: "https://example.com./01/" + g14, primary: "01=" + g14},
	{rule: "warning TRAILING_SLASH", uri: idg + "/01/" + g14 + "/", primary: "01=" + g14, warns: WarnTrailingSlash},
	{rule: "warning TRAILING_SLASH: after qualifiers, with the query", uri: idg + "/01/" + g14 + "/10/L/?17=261231", primary: "01=" + g14, quals: "10=L", attrs: "17=261231", warns: WarnTrailingSlash},
	{rule: "warnings: zero-suppressed and trailing slash together", uri: idg + "/01/9520123456788/", primary: "01=" + g14, warns: WarnZeroSuppressedGTIN + " " + WarnTrailingSlash},

	// MALFORMED_URI.
	{rule: "malformed: empty", uri: "", err: CodeMalformedURI},
	{rule: "malformed: not absolute", uri: "/01/" + g14, err: CodeMalformedURI, inErr: "absolute"},
	{rule: "malformed: scheme-relative", uri: "//id.gs1.org/01/" + g14, err: CodeMalformedURI},
	{rule: "malformed: no host", uri: "https:///01/" + g14, err: CodeMalformedURI, inErr: "host is empty"},
	{rule: "malformed: http without //", uri: "https:/01/" + g14, err: CodeMalformedURI},
	{rule: "malformed: user information", uri: "https://user:pw@id.gs1.org/01/" + g14, err: CodeMalformedURI, inErr: "user"},
	{rule: "malformed: underscore in the host", uri: "https://id_gs1.org/01/" + g14, err: CodeMalformedURI},
	{rule: "malformed: percent in the host", uri: "https://id%2Egs1.org/01/" + g14, err: CodeMalformedURI},
	{rule: "malformed: empty host label", uri: "https://id..gs1.org/01/" + g14, err: CodeMalformedURI},
	{rule: "malformed: label starting with a hyphen", uri: "https://-id.gs1.org/01/" + g14, err: CodeMalformedURI},
	{rule: "malformed: bad IPv4", uri: "https://256.1.1.1/01/" + g14, err: CodeMalformedURI},
	{rule: "malformed: bad IPv6", uri: "https://[2001:db8::g]/01/" + g14, err: CodeMalformedURI},
	{rule: "malformed: IPv6 zone", uri: "https://[fe80::1%25eth0]/01/" + g14, err: CodeMalformedURI},
	{rule: "malformed: port out of range", uri: "https://id.gs1.org:65536/01/" + g14, err: CodeMalformedURI},
	{rule: "malformed: port with letters", uri: "https://id.gs1.org:80a/01/" + g14, err: CodeMalformedURI},
	{rule: "malformed: raw space (go trap)", uri: idg + "/01/" + g14 + "/10/A B", err: CodeMalformedURI, inErr: "space"},
	{rule: "malformed: raw < (go trap)", uri: idg + "/01/" + g14 + "/10/A<B", err: CodeMalformedURI},
	{rule: "malformed: raw non-ASCII (go trap)", uri: idg + "/01/" + g14 + "/10/é", err: CodeMalformedURI, inErr: "non-ASCII"},
	{rule: "malformed: non-ASCII digits (go trap)", uri: idg + "/01/٠٩٥٢٠١٢٣٤٥٦٧٨٨", err: CodeMalformedURI},
	{rule: "malformed: bad percent escape", uri: idg + "/01/" + g14 + "/10/A%2", err: CodeMalformedURI, inErr: "percent"},
	{rule: "malformed: percent with non-hex", uri: idg + "/01/" + g14 + "/10/A%G1", err: CodeMalformedURI},
	{rule: "malformed: control character", uri: idg + "/01/" + g14 + "\n", err: CodeMalformedURI},
	{rule: "malformed: bracket outside the host", uri: idg + "/01/" + g14 + "/10/[A]", err: CodeMalformedURI},
	{rule: "malformed: two fragments", uri: idg + "/01/" + g14 + "#a#b", err: CodeMalformedURI},
	{rule: "length: exactly 4096 characters is accepted", uri: idg + "/01/" + g14 + "?x=" + strings.Repeat("a", 4096-len(idg+"/01/"+g14+"?x=")), primary: "01=" + g14, ignored: "x"},
	{rule: "malformed: longer than 4096", uri: idg + "/01/" + g14 + "?x=" + strings.Repeat("a", 4096), err: CodeMalformedURI, inErr: "4096"},
	{rule: "malformed: beats unsupported scheme", uri: "ftp://id.gs1.org/01/ " + g14, err: CodeMalformedURI},

	// UNSUPPORTED_URI_FORM.
	{rule: "unsupported: ftp scheme", uri: "ftp://id.gs1.org/01/" + g14, err: CodeUnsupportedURIForm, inErr: "scheme"},
	{rule: "unsupported: urn", uri: "urn:epc:id:sgtin:9520123.045678.1", err: CodeUnsupportedURIForm},
	{rule: "unsupported: convenience alpha gtin", uri: idg + "/gtin/" + g14, err: CodeUnsupportedURIForm, inErr: "convenience alpha"},
	{rule: "unsupported: convenience alpha gln with a qualifier", uri: idg + "/gln/" + gln + "/glnx/1", err: CodeUnsupportedURIForm},
	{rule: "unsupported: convenience alpha qualifier after a numeric key", uri: idg + "/01/" + g14 + "/lot/ABC", err: CodeUnsupportedURIForm, inErr: "/lot/"},
	{rule: "unsupported: compressed", uri: idg + "/AQnYUc1gmiA3", err: CodeUnsupportedURIForm, inErr: "compressed"},
	{rule: "unsupported: partially compressed", uri: idg + "/01/" + g14 + "/ARHKVAdpQg", err: CodeUnsupportedURIForm, inErr: "partially compressed"},
	{rule: "unsupported: compressed with a stem", uri: "https://example.com/dl/AQnYUc1gmiA3Hg", err: CodeUnsupportedURIForm},

	// Order of verdicts.
	{rule: "order: empty segment after a primary-key AI is INVALID_IDENTIFIER", uri: idg + "/01//10/L", err: CodeInvalidIdentifier, inErr: "empty"},
	{rule: "order: /01/ alone is an empty value, not a trailing slash", uri: idg + "/01/", err: CodeInvalidIdentifier, inErr: "empty"},
	{rule: "warning TRAILING_SLASH: a value spelled like a primary AI before the slash", uri: idg + "/01/" + g14 + "/10/01/", primary: "01=" + g14, quals: "10=01", warns: WarnTrailingSlash},
	{rule: "order: empty value of a key in the stem position", uri: idg + "/00//01/" + g14, err: CodeInvalidIdentifier, inErr: "empty"},
	{rule: "order: empty primary value beats the unsupported scheme", uri: "ftp://id.gs1.org/01//x", err: CodeInvalidIdentifier},
	{rule: "order: a valid key followed by junk is INVALID_IDENTIFIER", uri: idg + "/01/" + g14 + "/reviews", err: CodeInvalidIdentifier, inErr: "/reviews"},
	{rule: "order: junk after qualifiers", uri: idg + "/01/" + g14 + "/10/L/extra", err: CodeInvalidIdentifier},
	{rule: "order: a qualifier AI without its value", uri: idg + "/01/" + g14 + "/10", err: CodeInvalidIdentifier},
	{rule: "order: an invalid key followed by junk is NO_PRIMARY_IDENTIFIER", uri: idg + "/01/123/reviews", err: CodeNoPrimaryIdentifier},
	{rule: "order: no key path", uri: "https://example.com/products/shoe", err: CodeNoPrimaryIdentifier},
	{rule: "order: host only", uri: "https://example.com", err: CodeNoPrimaryIdentifier},
	{rule: "order: root path", uri: "https://example.com/", err: CodeNoPrimaryIdentifier},
	{rule: "order: a qualifier without a primary key", uri: idg + "/10/ABC", err: CodeNoPrimaryIdentifier},
	{rule: "order: primary key only in the query", uri: idg + "/?01=" + g14, err: CodeNoPrimaryIdentifier, inErr: "query"},
	{rule: "order: unknown AI in key position", uri: idg + "/99999/123", err: CodeNoPrimaryIdentifier},
	{rule: "unsupported: a bare 14-digit final segment reads as compressed, with a hint", uri: idg + "/" + g14, err: CodeUnsupportedURIForm, inErr: "/01/"},
	{rule: "order: an element error beats a later exclusion", uri: idg + "/01/" + g14 + "/10/L?37=5&17=999999", err: CodeInvalidIdentifier, inErr: "month"},
}

func TestParseDigitalLink(t *testing.T) {
	for _, tc := range dlCases {
		t.Run(tc.rule, func(t *testing.T) {
			l, err := ParseDigitalLink(tc.uri)
			if tc.err != "" {
				var e *Error
				if !errors.As(err, &e) || e.Code != tc.err {
					t.Fatalf("ParseDigitalLink(%q) = %+v, %v; want code %s", tc.uri, l, err, tc.err)
				}
				if e.Detail == "" || len(e.Detail) > maxDetail || !strings.Contains(e.Detail, tc.inErr) {
					t.Errorf("detail %q should hold %q", e.Detail, tc.inErr)
				}
				if l != nil {
					t.Error("a link with an error")
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseDigitalLink(%q): %v", tc.uri, err)
			}
			if got := tc.primary; elemText([]Element{l.Primary}) != got {
				t.Errorf("primary = %q, want %q", elemText([]Element{l.Primary}), got)
			}
			if got := elemText(l.Qualifiers); got != tc.quals {
				t.Errorf("qualifiers = %q, want %q", got, tc.quals)
			}
			if got := elemText(l.Attributes); got != tc.attrs {
				t.Errorf("attributes = %q, want %q", got, tc.attrs)
			}
			if got := strings.Join(l.IgnoredQueryParams, " "); got != tc.ignored {
				t.Errorf("ignored = %q, want %q", got, tc.ignored)
			}
			if got := warningCodes(l.Warnings); got != tc.warns {
				t.Errorf("warnings = %q, want %q (%v)", got, tc.warns, l.Warnings)
			}
			if tc.stem != "" && l.Stem != tc.stem {
				t.Errorf("stem = %q, want %q", l.Stem, tc.stem)
			}
			if tc.es != "" && l.ElementString != tc.es {
				t.Errorf("element string = %q, want %q", l.ElementString, tc.es)
			}
			if tc.canon != "" && l.CanonicalURI != tc.canon {
				t.Errorf("canonical = %q, want %q", l.CanonicalURI, tc.canon)
			}
			checkLinkShape(t, l)
		})
	}
}

// checkLinkShape checks what must hold of every parsed link.
func checkLinkShape(t *testing.T, l *Link) {
	t.Helper()
	if l.Qualifiers == nil || l.Attributes == nil || l.IgnoredQueryParams == nil {
		t.Error("nil list in a link")
	}
	if !strings.HasPrefix(l.URI, l.Stem) {
		t.Errorf("stem %q is not a prefix of %q", l.Stem, l.URI)
	}
	want := "(" + l.Primary.AI + ")" + strings.ReplaceAll(l.Primary.Value, "(", `\(`)
	for _, e := range append(append([]Element{}, l.Qualifiers...), l.Attributes...) {
		want += "(" + e.AI + ")" + strings.ReplaceAll(e.Value, "(", `\(`)
	}
	if l.ElementString != want {
		t.Errorf("element string %q, want %q", l.ElementString, want)
	}
	if !strings.HasPrefix(l.CanonicalURI, CanonicalHost+"/"+l.Primary.AI+"/") {
		t.Errorf("canonical %q", l.CanonicalURI)
	}
	switch l.Primary.AI {
	case "01":
		if l.Primary.Subject != "gtin:"+l.Primary.Value || len(l.Primary.Value) != 14 {
			t.Errorf("primary subject %q", l.Primary.Subject)
		}
	case "414":
		if l.Primary.Subject != "gln:"+l.Primary.Value {
			t.Errorf("primary subject %q", l.Primary.Subject)
		}
	case "00":
		if l.Primary.Subject != "sscc:"+l.Primary.Value {
			t.Errorf("primary subject %q", l.Primary.Subject)
		}
	default:
		if l.Primary.Subject != "" {
			t.Errorf("primary subject %q for AI %s", l.Primary.Subject, l.Primary.AI)
		}
	}
	for _, e := range append(append([]Element{l.Primary}, l.Qualifiers...), l.Attributes...) {
		if e.Name == "" {
			t.Errorf("element %s without a name", e.AI)
		}
	}
	for _, w := range l.Warnings {
		if w.Severity != SeverityWarn || w.Detail == "" {
			t.Errorf("warning %+v", w)
		}
	}
	if _, err := json.Marshal(l); err != nil {
		t.Error(err)
	}
}

func elemText(es []Element) string {
	var parts []string
	for _, e := range es {
		parts = append(parts, e.AI+"="+e.Value)
	}
	return strings.Join(parts, " ")
}

func TestLinkJSONShape(t *testing.T) {
	l, err := ParseDigitalLink(idg + "/01/" + g14)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"uri":"https://id.gs1.org/01/09520123456788","stem":"https://id.gs1.org","primary":{"ai":"01","name":"GTIN","value":"09520123456788","subject":"gtin:09520123456788"},"qualifiers":[],"attributes":[],"ignored_query_params":[],"element_string":"(01)09520123456788","canonical_uri":"https://id.gs1.org/01/09520123456788"}`
	if string(b) != want {
		t.Errorf("JSON\n got %s\nwant %s", b, want)
	}
}

// TestEveryPrimaryKeyCovered checks the table has the 16 primary keys of
// the dictionary and the cases above parse each of them.
func TestEveryPrimaryKeyCovered(t *testing.T) {
	want := "00 01 253 255 401 402 414 415 417 8003 8004 8006 8010 8013 8017 8018"
	var keys []string
	for _, d := range aiTable {
		if d.dlpkey {
			keys = append(keys, d.ai)
		}
	}
	if got := strings.Join(keys, " "); got != want {
		t.Fatalf("primary keys in the table: %s", got)
	}
	parsed := map[string]bool{}
	for _, tc := range dlCases {
		if tc.err == "" {
			parsed[strings.SplitN(tc.primary, "=", 2)[0]] = true
		}
	}
	for _, k := range keys {
		if !parsed[k] {
			t.Errorf("no valid case for primary key %s", k)
		}
	}
}

// TestEveryErrorCodeCovered checks each error code appears in a case.
func TestEveryErrorCodeCovered(t *testing.T) {
	seen := map[string]bool{}
	for _, tc := range dlCases {
		seen[tc.err] = true
	}
	for _, tc := range validateCases {
		seen[tc.err] = true
	}
	for _, tc := range parseSubjectCases {
		seen[tc.err] = true
	}
	for _, c := range []string{CodeUnsupportedNamespace, CodeMalformedURI, CodeUnsupportedURIForm, CodeNoPrimaryIdentifier, CodeInvalidIdentifier} {
		if !seen[c] {
			t.Errorf("no case for %s", c)
		}
	}
}

// TestConvenienceAI checks the table a resolver rewrites old printed paths
// with: every alpha the parser refuses maps to the AI it names, in any case.
func TestConvenienceAI(t *testing.T) {
	for _, tc := range []struct {
		alpha, ai string
		primary   bool
	}{{"gtin", "01", true}, {"GTIN", "01", true}, {"sscc", "00", true}, {"gln", "414", true}, {"giai", "8004", true},
		{"lot", "10", false}, {"Ser", "21", false}, {"cpv", "22", false}, {"glnx", "254", false}} {
		ai, primary, ok := ConvenienceAI(tc.alpha)
		if !ok || ai != tc.ai || primary != tc.primary {
			t.Errorf("ConvenienceAI(%q) = %q %v %v, want %q %v", tc.alpha, ai, primary, ok, tc.ai, tc.primary)
		}
	}
	for _, word := range []string{"01", "passport", "", "gtins"} {
		if _, _, ok := ConvenienceAI(word); ok {
			t.Errorf("ConvenienceAI(%q) is ok", word)
		}
	}
	for alpha, ai := range primaryAlphas {
		if _, err := ParseDigitalLink(idg + "/" + alpha + "/x"); err == nil || err.(*Error).Code != CodeUnsupportedURIForm {
			t.Errorf("/%s/ parses: %v", alpha, err)
		}
		if d := lookupAI(ai); d == nil || !d.dlpkey {
			t.Errorf("alpha %s names AI %s, which is no primary key", alpha, ai)
		}
	}
}
