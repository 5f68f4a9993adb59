package ddb

import (
	"encoding/json"
	"errors"
	"fmt"
)

// AttributeValue is one DynamoDB value: one of the AttributeValueMember
// types, always as a pointer (as the SDK's types package has them).
type AttributeValue interface{ isAttributeValue() }

// The members of AttributeValue, named as the API and the SDK name them.
type (
	AttributeValueMemberS    struct{ Value string }
	AttributeValueMemberN    struct{ Value string } // the number as DynamoDB keeps it: decimal text
	AttributeValueMemberB    struct{ Value []byte }
	AttributeValueMemberBOOL struct{ Value bool }
	AttributeValueMemberNULL struct{ Value bool }
	AttributeValueMemberM    struct{ Value map[string]AttributeValue }
	AttributeValueMemberL    struct{ Value []AttributeValue }
	AttributeValueMemberSS   struct{ Value []string }
	AttributeValueMemberNS   struct{ Value []string }
	AttributeValueMemberBS   struct{ Value [][]byte }
)

func (*AttributeValueMemberS) isAttributeValue()    {}
func (*AttributeValueMemberN) isAttributeValue()    {}
func (*AttributeValueMemberB) isAttributeValue()    {}
func (*AttributeValueMemberBOOL) isAttributeValue() {}
func (*AttributeValueMemberNULL) isAttributeValue() {}
func (*AttributeValueMemberM) isAttributeValue()    {}
func (*AttributeValueMemberL) isAttributeValue()    {}
func (*AttributeValueMemberSS) isAttributeValue()   {}
func (*AttributeValueMemberNS) isAttributeValue()   {}
func (*AttributeValueMemberBS) isAttributeValue()   {}

// item is an attribute map in DynamoDB's JSON form ({"pk": {"S": "…"}}),
// wherever a request or an answer has one.
type item map[string]AttributeValue

func (m item) MarshalJSON() ([]byte, error) { return appendItem(nil, m) }

func (m *item) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if raw == nil {
		*m = nil
		return nil
	}
	out := make(item, len(raw))
	for k, v := range raw {
		av, err := decodeAV(v)
		if err != nil {
			return fmt.Errorf("attribute %q: %w", k, err)
		}
		out[k] = av
	}
	*m = out
	return nil
}

func appendItem(b []byte, m map[string]AttributeValue) ([]byte, error) {
	b = append(b, '{')
	first := true
	for k, v := range m {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(appendJSON(b, k), ':')
		var err error
		if b, err = appendAV(b, v); err != nil {
			return nil, fmt.Errorf("attribute %q: %w", k, err)
		}
	}
	return append(b, '}'), nil
}

// appendAV writes one value as its one-member union object ({"S": "…"}).
func appendAV(b []byte, av AttributeValue) ([]byte, error) {
	member := func(name string, v any) []byte {
		b = append(b, `{"`...)
		b = append(b, name...)
		b = append(b, `":`...)
		return append(appendJSON(b, v), '}')
	}
	switch v := av.(type) {
	case *AttributeValueMemberS:
		return member("S", v.Value), nil
	case *AttributeValueMemberN:
		return member("N", v.Value), nil
	case *AttributeValueMemberB:
		return member("B", v.Value), nil // base64, as JSON encodes []byte
	case *AttributeValueMemberBOOL:
		return member("BOOL", v.Value), nil
	case *AttributeValueMemberNULL:
		return member("NULL", v.Value), nil
	case *AttributeValueMemberSS:
		return member("SS", nonNil(v.Value)), nil
	case *AttributeValueMemberNS:
		return member("NS", nonNil(v.Value)), nil
	case *AttributeValueMemberBS:
		return member("BS", nonNil(v.Value)), nil
	case *AttributeValueMemberM:
		b, err := appendItem(append(b, `{"M":`...), v.Value)
		return append(b, '}'), err
	case *AttributeValueMemberL:
		b = append(b, `{"L":[`...)
		for i, e := range v.Value {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendAV(b, e); err != nil {
				return nil, fmt.Errorf("list element %d: %w", i, err)
			}
		}
		return append(b, "]}"...), nil
	}
	return nil, fmt.Errorf("unsupported attribute value %T", av)
}

// decodeAV reads one value, its member a pointer.
func decodeAV(raw json.RawMessage) (AttributeValue, error) {
	var u map[string]json.RawMessage
	if err := json.Unmarshal(raw, &u); err != nil {
		return nil, err
	}
	if len(u) != 1 {
		return nil, errors.New("an attribute value has exactly one member")
	}
	for k, v := range u {
		return decodeMember(k, v)
	}
	panic("unreachable")
}

func decodeMember(k string, v json.RawMessage) (AttributeValue, error) {
	switch k {
	case "S":
		m := &AttributeValueMemberS{}
		return m, json.Unmarshal(v, &m.Value)
	case "N":
		m := &AttributeValueMemberN{}
		return m, json.Unmarshal(v, &m.Value)
	case "B":
		m := &AttributeValueMemberB{}
		return m, json.Unmarshal(v, &m.Value)
	case "BOOL":
		m := &AttributeValueMemberBOOL{}
		return m, json.Unmarshal(v, &m.Value)
	case "NULL":
		m := &AttributeValueMemberNULL{}
		return m, json.Unmarshal(v, &m.Value)
	case "SS":
		m := &AttributeValueMemberSS{}
		return m, json.Unmarshal(v, &m.Value)
	case "NS":
		m := &AttributeValueMemberNS{}
		return m, json.Unmarshal(v, &m.Value)
	case "BS":
		m := &AttributeValueMemberBS{}
		return m, json.Unmarshal(v, &m.Value)
	case "M":
		var m item
		if err := json.Unmarshal(v, &m); err != nil {
			return nil, err
		}
		if m == nil {
			m = item{}
		}
		return &AttributeValueMemberM{Value: m}, nil
	case "L":
		var l []json.RawMessage
		if err := json.Unmarshal(v, &l); err != nil {
			return nil, err
		}
		out := make([]AttributeValue, len(l))
		for i, e := range l {
			av, err := decodeAV(e)
			if err != nil {
				return nil, fmt.Errorf("list element %d: %w", i, err)
			}
			out[i] = av
		}
		return &AttributeValueMemberL{Value: out}, nil
	}
	return nil, fmt.Errorf("unknown attribute value member %q", k)
}

func appendJSON(b []byte, v any) []byte {
	j, err := json.Marshal(v)
	if err != nil { // strings, bools, byte and string slices always encode
		panic(err)
	}
	return append(b, j...)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
