package service

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/productdata/pds/domain"
)

// eachMember steps over values by their brackets and quotes: strings that
// hold quotes, backslashes, brackets and a member's name, nested objects
// and arrays, and scalars all come back whole and in order.
func TestEachMemberStepsOverValues(t *testing.T) {
	obj := `{"status":"found","data":{"a":"x\"}],\\","b":[1,{"sources":[]}]},` +
		`"claims":[{"v":"\\\\"},{"v":"\"sources\":["}] , "n": -1.5e3,"t":true,"z":null,"sources":[{"id":"s"}]}`
	var keys, values []string
	err := eachMember([]byte(obj), func(k, v []byte) error {
		keys = append(keys, string(k))
		values = append(values, string(v))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	wantKeys := []string{"status", "data", "claims", "n", "t", "z", "sources"}
	wantValues := []string{`"found"`, `{"a":"x\"}],\\","b":[1,{"sources":[]}]}`, `[{"v":"\\\\"},{"v":"\"sources\":["}]`,
		`-1.5e3`, `true`, `null`, `[{"id":"s"}]`}
	if !reflect.DeepEqual(keys, wantKeys) || !reflect.DeepEqual(values, wantValues) {
		t.Fatalf("got %q = %q\nwant %q = %q", keys, values, wantKeys, wantValues)
	}
	var elems []string
	if err := eachElement([]byte(`[ {"a":"]"} ,"x",[1,2]]`), func(e []byte) error { elems = append(elems, string(e)); return nil }); err != nil {
		t.Fatal(err)
	}
	if want := []string{`{"a":"]"}`, `"x"`, `[1,2]`}; !reflect.DeepEqual(elems, want) {
		t.Fatalf("elements %q, want %q", elems, want)
	}
	for _, bad := range []string{``, `[]`, `{"a"}`, `{"a":"x}`, `{"a":[1}`, `{"a":1,}`} {
		if err := eachMember([]byte(bad), func(_, _ []byte) error { return nil }); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// decodePublicProduct jumps over the claims to the sources that follow
// them; a sources member name inside a claim, or inside a member after the
// real one, leaves the passport read as when every value is stepped over.
func TestDecodePublicProductJumpsOverClaims(t *testing.T) {
	identity := []byte(`{"subject":"gtin:1","identifiers":["gtin:1"],"trust_level":"L1","status":"active","manufacturer":"M","manufacturer_gln":null,"brand":null,"updated_at":"2025-01-01T00:00:00Z","has_passport":true}`)
	data := `"data":{"subject":"gtin:1","attributes":{"name":"N"},"updated_at":"2025-01-01T00:00:00Z"}`
	src := `[{"id":"s1","name":"S"}]`
	passports := []string{
		`{"status":"found",` + data + `,"claims":[{"o":{"v":[1],"sources":[2]}}],"sources":` + src + `,"validation":{"technical":"pass"}}`,
		`{"status":"found",` + data + `,"claims":[{"o":{"v":[1],"sources":[2]}}],"sources":` + src + `}`,
		`{"status":"found",` + data + `,"claims":[],"sources":` + src + `,"validation":{"technical":"pass"},"warnings":[{"code":"W","details":{"a":[1],"sources":[3]}}]}`,
		`{"status":"found",` + data + `,"claims":[{"v":"\"],\"sources\":[\""}],"sources":` + src + `}`,
		`{"status":"found",` + data + `,"claims":[{"o":{"v":[1],"sources":[2]}}]}`,
		`{"status":"not_found","reason":"NO_PASSPORT","sources":[]}`,
	}
	for _, passport := range passports {
		var jumped, stepped domain.PublicProduct
		if err := decodePublicProduct(&jumped, identity, []byte(passport), nil, map[string][]domain.Source{}); err != nil {
			t.Fatalf("%s: %v", passport, err)
		}
		if err := stepOverEveryMember(&stepped, identity, []byte(passport)); err != nil {
			t.Fatalf("%s: %v", passport, err)
		}
		if !reflect.DeepEqual(jumped, stepped) {
			t.Errorf("%s:\njumped  %+v\nstepped %+v", passport, jumped.Passport, stepped.Passport)
		}
		if len(jumped.Passport.Sources) == 0 && strings.Contains(passport, src) {
			t.Errorf("%s: no sources read", passport)
		}
	}
}

// stepOverEveryMember decodes what decodePublicProduct does, stepping over
// every value of the passport.
func stepOverEveryMember(p *domain.PublicProduct, identity, passport []byte) error {
	*p = domain.PublicProduct{}
	if err := json.Unmarshal(identity, &p.Identity); err != nil {
		return err
	}
	pp := &p.Passport
	var data []byte
	err := eachMember(passport, func(key, value []byte) error {
		switch string(key) {
		case "status":
			return json.Unmarshal(value, &pp.Status)
		case "reason":
			return json.Unmarshal(value, &pp.Reason)
		case "data":
			data = value
		case "sources":
			return eachElement(value, func(elem []byte) error {
				var src domain.Source
				err := json.Unmarshal(elem, &src)
				pp.Sources = append(pp.Sources, src)
				return err
			})
		case "validation":
			return json.Unmarshal(value, &pp.Validation)
		}
		return nil
	})
	if err != nil || pp.Status != domain.StatusFound {
		return err
	}
	pp.Data = new(domain.PassportData)
	return json.Unmarshal(data, pp.Data)
}

// The identity and coverage read by hand are what the JSON decoder makes of
// them, escapes, nulls and members not foreseen included (which are left to
// it).
func TestPlainViewsDecodeAsJSON(t *testing.T) {
	identities := []string{
		`{"subject":"gtin:1","identifiers":["gtin:1","mpn:x"],"trust_level":"L4","status":"active","manufacturer":"Garcia & Fils","manufacturer_gln":"3164908980004","brand":null,"updated_at":"2025-06-18T20:07:50Z","has_passport":true}`,
		`{"subject":"gtin:2","identifiers":[],"trust_level":"L1","status":"active","manufacturer":"Gu\u00e9rin \"M\"","manufacturer_gln":null,"brand":"B","updated_at":"x","has_passport":false}`,
		`{"subject":"gtin:3","identifiers":null,"manufacturer":"Guérin","brand":"B","extra":1}`,
		`{"subject":"gtin:4","has_passport":null}`,
	}
	var plainID domain.Identity
	if err := plainIdentity([]byte(identities[0]), &plainID); err != nil {
		t.Errorf("%s is read by the JSON decoder, not by hand: %v", identities[0], err)
	}
	for _, b := range identities {
		var got, want domain.Identity
		if err := decodeIdentity([]byte(b), &got); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if err := json.Unmarshal([]byte(b), &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\ngot  %+v\nwant %+v", b, got, want)
		}
	}
	coverages := []string{
		`{"sources_consulted":["a","b"]}`,
		`{"sources_consulted":[],"sources_skipped":[{"id":"c","reason":"LICENCE_RESTRICTED"}]}`,
		`{"sources_consulted":["a\"b"],"sources_skipped":[{"id":"c","reason":"R","note":"n"}]}`,
	}
	for _, b := range coverages {
		var got, want domain.Coverage
		if err := decodeCoverage([]byte(b), &got); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if err := json.Unmarshal([]byte(b), &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\ngot  %+v\nwant %+v", b, got, want)
		}
	}
	datas := []string{
		`{"subject":"gtin:1","attributes":{"carbon_footprint_kg":3.45,"name":"Garcia \u0026 Fils","allergens":["milk"],"vegan":true,"x":null,"o":{"a":[1,"]"]}},"units":{"carbon_footprint_kg":"kg CO2e"},"updated_at":"2025-05-16T18:09:19Z"}`,
		`{"subject":"gtin:2","attributes":{"na\"me":"N"},"updated_at":"u"}`,
		`{"subject":"gtin:3","attributes":{"n":1},"units":{"n":"k\u00e9"},"updated_at":"u"}`,
		`{"subject":"gtin:4","attributes":{},"units":{},"updated_at":"u","other":1}`,
	}
	var plain domain.PassportData
	if err := plainPassportData([]byte(datas[0]), &plain); err != nil {
		t.Errorf("%s is read by the JSON decoder, not by hand: %v", datas[0], err)
	}
	for _, b := range datas {
		var got, want domain.PassportData
		if err := decodePassportData([]byte(b), &got); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if err := json.Unmarshal([]byte(b), &want); err != nil {
			t.Fatal(err)
		}
		if len(want.Units) == 0 && len(got.Units) == 0 {
			want.Units, got.Units = nil, nil // no units either way
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\ngot  %+v\nwant %+v", b, got, want)
		}
	}
	for _, b := range []string{`{"technical":"pass","regulatory":"fail"}`, `{"technical":"p\u00e4ss"}`, `null`, `{"other":"x"}`} {
		got, err := decodeValidation([]byte(b))
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		var want *domain.Validation
		if err := json.Unmarshal([]byte(b), &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %+v, want %+v", b, got, want)
		}
	}
	var id domain.Identity
	if err := decodeIdentity([]byte(`{"subject":1}`), &id); err == nil {
		t.Errorf("a number for a subject: no error")
	}
}
