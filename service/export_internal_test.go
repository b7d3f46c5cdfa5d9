package service

import (
	"reflect"
	"testing"
)

// eachMember steps over values by their brackets and quotes: strings that
// hold quotes, backslashes, brackets and a member's name, nested objects
// and arrays, and scalars all come back whole and in order.
func TestEachMemberStepsOverValues(t *testing.T) {
	obj := `{"status":"found","data":{"a":"x\"}],\\","b":[1,{"sources":[]}]},` +
		`"claims":[{"v":"\\\\"},{"v":"\"sources\":["}] , "n": -1.5e3,"t":true,"z":null,"sources":[{"id":"s"}]}`
	var keys, values []string
	err := eachMember([]byte(obj), func(k string, v []byte) error {
		keys = append(keys, k)
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
		if err := eachMember([]byte(bad), func(string, []byte) error { return nil }); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
