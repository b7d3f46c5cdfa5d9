package service

import (
	"bytes"
	"encoding/json"

	"github.com/productdata/pds/domain"
)

// Identity views, coverages, a passport's status, verdicts and data are
// small JSON objects of known shape, decoded for every product exported.
// For the shapes ingest writes they are read here by hand, for about two
// thirds of what the JSON decoder's reflection costs (3.2 s of CPU instead
// of 4.9 s for the identities, data and coverages of 1M products); anything
// else (an escape in a string, a member or a type not foreseen) is left to
// unmarshalView, which decides.

// decodeIdentity decodes an identity view's data into id.
func decodeIdentity(b []byte, id *domain.Identity) error {
	if plainIdentity(b, id) == nil {
		return nil
	}
	*id = domain.Identity{}
	return unmarshalView(b, id)
}

func plainIdentity(b []byte, id *domain.Identity) error {
	return eachMember(b, func(key, v []byte) error {
		var err error
		switch string(key) {
		case "subject":
			id.Subject, err = plainString(v)
		case "identifiers":
			id.Identifiers, err = plainStrings(v)
		case "trust_level":
			id.TrustLevel, err = plainString(v)
		case "status":
			id.Status, err = plainString(v)
		case "manufacturer":
			id.Manufacturer, err = plainString(v)
		case "manufacturer_gln":
			id.ManufacturerGLN, err = plainOptional(v)
		case "brand":
			id.Brand, err = plainOptional(v)
		case "updated_at":
			id.UpdatedAt, err = plainString(v)
		case "has_passport":
			id.HasPassport, err = plainBool(v)
		default:
			err = errNotPlain
		}
		return err
	})
}

// decodePassportData decodes a found passport's data into d. The values of
// its attributes refer to b, as unmarshalView's do.
func decodePassportData(b []byte, d *domain.PassportData) error {
	if plainPassportData(b, d) == nil {
		return nil
	}
	// The decoder makes a map it is given no room for with room for 64
	// entries; a passport has about 8 attributes and 3 units.
	*d = domain.PassportData{Attributes: make(map[string]json.RawMessage, 8), Units: make(map[string]string, 8)}
	if err := unmarshalView(b, d); err != nil {
		return err
	}
	if len(d.Units) == 0 {
		d.Units = nil // as when it is decoded without room made
	}
	return nil
}

func plainPassportData(b []byte, d *domain.PassportData) error {
	return eachMember(b, func(key, v []byte) error {
		var err error
		switch string(key) {
		case "subject":
			d.Subject, err = plainString(v)
		case "attributes":
			if d.Attributes == nil { // a member given twice adds to it, as in the JSON decoder
				d.Attributes = make(map[string]json.RawMessage, 8)
			}
			err = eachMember(v, func(predicate, value []byte) error {
				if bytes.IndexByte(predicate, '\\') >= 0 {
					return errNotPlain
				}
				d.Attributes[string(predicate)] = value
				return nil
			})
		case "units":
			if d.Units == nil {
				d.Units = make(map[string]string, 4)
			}
			err = eachMember(v, func(predicate, unit []byte) error {
				if bytes.IndexByte(predicate, '\\') >= 0 {
					return errNotPlain
				}
				u, err := plainString(unit)
				d.Units[string(predicate)] = u
				return err
			})
		case "updated_at":
			d.UpdatedAt, err = plainString(v)
		default:
			err = errNotPlain
		}
		return err
	})
}

// decodeCoverage decodes a passport view's coverage into c.
func decodeCoverage(b []byte, c *domain.Coverage) error {
	if plainCoverage(b, c) == nil {
		return nil
	}
	*c = domain.Coverage{}
	return unmarshalView(b, c)
}

func plainCoverage(b []byte, c *domain.Coverage) error {
	return eachMember(b, func(key, v []byte) error {
		var err error
		switch string(key) {
		case "sources_consulted":
			c.SourcesConsulted, err = plainStrings(v)
		case "sources_skipped":
			err = eachElement(v, func(elem []byte) error {
				var sk domain.Skipped
				err := eachMember(elem, func(key, v []byte) error {
					var err error
					switch string(key) {
					case "id":
						sk.ID, err = plainString(v)
					case "reason":
						sk.Reason, err = plainString(v)
					default:
						err = errNotPlain
					}
					return err
				})
				c.SourcesSkipped = append(c.SourcesSkipped, sk)
				return err
			})
		default:
			err = errNotPlain
		}
		return err
	})
}

// decodeValidation decodes a passport's verdicts.
func decodeValidation(b []byte) (*domain.Validation, error) {
	v := new(domain.Validation)
	if plainValidation(b, v) == nil {
		return v, nil
	}
	var fallback *domain.Validation
	err := unmarshalView(b, &fallback)
	return fallback, err
}

func plainValidation(b []byte, v *domain.Validation) error {
	return eachMember(b, func(key, value []byte) error {
		var err error
		switch string(key) {
		case "technical":
			v.Technical, err = plainString(value)
		case "business":
			v.Business, err = plainString(value)
		case "regulatory":
			v.Regulatory, err = plainString(value)
		case "authority":
			v.Authority, err = plainString(value)
		default:
			err = errNotPlain
		}
		return err
	})
}

// plainString reads a JSON string without escapes.
func plainString(v []byte) (string, error) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' || bytes.IndexByte(v, '\\') >= 0 {
		return "", errNotPlain
	}
	return string(v[1 : len(v)-1]), nil
}

// plainOptional reads null or a JSON string without escapes.
func plainOptional(v []byte) (*string, error) {
	if string(v) == "null" {
		return nil, nil
	}
	s, err := plainString(v)
	if err != nil {
		return nil, err
	}
	return &s, nil
}

// plainStrings reads a JSON array of strings without escapes.
func plainStrings(v []byte) ([]string, error) {
	ss := []string{}
	err := eachElement(v, func(elem []byte) error {
		s, err := plainString(elem)
		ss = append(ss, s)
		return err
	})
	return ss, err
}

// plainBool reads true or false.
func plainBool(v []byte) (bool, error) {
	switch string(v) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, errNotPlain
}
