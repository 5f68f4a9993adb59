package ddb

import (
	"bytes"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Marshal and Unmarshal convert Go values to attribute values and back as
// the SDK's attributevalue package does with its default options, for the
// kinds the stores' item structs use (TestMarshalAgreesWithAttributeValue):
// a struct is a map (M) of its exported fields, named by their
// `dynamodbav:"name,omitempty"` tag or else the field's name ("-" skips
// one; an embedded struct's fields count as its container's); strings,
// numbers and bools are S, N and BOOL; []byte is B; other slices and
// arrays are lists (L); maps with string keys are M; a nil pointer, slice
// or map is NULL. omitempty leaves out a zero value: "", 0, false, nil.
// Sets and time.Time are not supported (the items keep times as text).

// Marshal converts v to one attribute value.
func Marshal(v any) (AttributeValue, error) {
	av, err := marshal(reflect.ValueOf(v), false)
	if err == nil && av == nil {
		av = &AttributeValueMemberNULL{Value: true}
	}
	return av, err
}

// MarshalMap converts a struct (or a map with string keys) to an item.
func MarshalMap(v any) (map[string]AttributeValue, error) {
	av, err := Marshal(v)
	if err != nil {
		return nil, err
	}
	m, ok := av.(*AttributeValueMemberM)
	if !ok {
		return nil, fmt.Errorf("ddb: MarshalMap of %T: not a struct or map", v)
	}
	return m.Value, nil
}

// marshal converts v; nil means "leave the attribute out" (omitempty).
func marshal(v reflect.Value, omitEmpty bool) (AttributeValue, error) {
	if isZero(v) {
		if omitEmpty {
			return nil, nil
		}
		if nullable(v) {
			return &AttributeValueMemberNULL{Value: true}, nil
		}
	}
	if k := v.Kind(); k == reflect.Pointer || k == reflect.Interface {
		return marshal(v.Elem(), omitEmpty)
	}
	switch v.Kind() {
	case reflect.String:
		return &AttributeValueMemberS{Value: v.String()}, nil
	case reflect.Bool:
		return &AttributeValueMemberBOOL{Value: v.Bool()}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return &AttributeValueMemberN{Value: strconv.FormatInt(v.Int(), 10)}, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return &AttributeValueMemberN{Value: strconv.FormatUint(v.Uint(), 10)}, nil
	case reflect.Float32, reflect.Float64:
		return &AttributeValueMemberN{Value: strconv.FormatFloat(v.Float(), 'f', -1, v.Type().Bits())}, nil
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			b := make([]byte, v.Len())
			reflect.Copy(reflect.ValueOf(b), v)
			return &AttributeValueMemberB{Value: b}, nil
		}
		l := &AttributeValueMemberL{Value: make([]AttributeValue, 0, v.Len())}
		for i := range v.Len() {
			e, err := marshal(v.Index(i), false)
			if err != nil {
				return nil, err
			}
			l.Value = append(l.Value, e)
		}
		return l, nil
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			return nil, fmt.Errorf("ddb: cannot marshal %v: map keys must be strings", v.Type())
		}
		m := &AttributeValueMemberM{Value: make(map[string]AttributeValue, v.Len())}
		for it := v.MapRange(); it.Next(); {
			if it.Key().String() == "" {
				return nil, fmt.Errorf("ddb: cannot marshal a map with an empty key (DynamoDB refuses empty names)")
			}
			e, err := marshal(it.Value(), false)
			if err != nil {
				return nil, err
			}
			m.Value[it.Key().String()] = e
		}
		return m, nil
	case reflect.Struct:
		if v.Type() == timeType {
			return nil, fmt.Errorf("ddb: cannot marshal time.Time; store it as text")
		}
		m := &AttributeValueMemberM{Value: map[string]AttributeValue{}}
		for _, f := range fieldsOf(v.Type()) {
			fv, ok := fieldByIndex(v, f.index)
			if !ok {
				continue
			}
			e, err := marshal(fv, f.omitEmpty)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f.name, err)
			}
			if e != nil {
				m.Value[f.name] = e
			}
		}
		return m, nil
	case reflect.Invalid:
		return &AttributeValueMemberNULL{Value: true}, nil
	}
	return nil, fmt.Errorf("ddb: cannot marshal a %v", v.Type())
}

// Unmarshal stores av in the value out points to.
func Unmarshal(av AttributeValue, out any) error {
	v := reflect.ValueOf(out)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return fmt.Errorf("ddb: Unmarshal needs a non-nil pointer, not %T", out)
	}
	return unmarshal(av, v.Elem())
}

// UnmarshalMap stores an item in the struct (or map) out points to.
func UnmarshalMap(m map[string]AttributeValue, out any) error {
	return Unmarshal(&AttributeValueMemberM{Value: m}, out)
}

func unmarshal(av AttributeValue, v reflect.Value) error {
	if _, null := av.(*AttributeValueMemberNULL); null || av == nil {
		v.SetZero()
		return nil
	}
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		return unmarshal(av, v.Elem())
	}
	mismatch := func() error { return fmt.Errorf("ddb: cannot unmarshal %T into a %v", av, v.Type()) }
	switch a := av.(type) {
	case *AttributeValueMemberS:
		if v.Kind() == reflect.String {
			v.SetString(a.Value)
			return nil
		}
		if v.Kind() == reflect.Interface && v.NumMethod() == 0 {
			v.Set(reflect.ValueOf(a.Value))
			return nil
		}
	case *AttributeValueMemberN:
		return unmarshalNumber(a.Value, v, mismatch)
	case *AttributeValueMemberBOOL:
		if v.Kind() == reflect.Bool {
			v.SetBool(a.Value)
			return nil
		}
		if v.Kind() == reflect.Interface && v.NumMethod() == 0 {
			v.Set(reflect.ValueOf(a.Value))
			return nil
		}
	case *AttributeValueMemberB:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			v.SetBytes(bytes.Clone(a.Value))
			return nil
		}
	case *AttributeValueMemberL:
		return unmarshalList(a.Value, v, mismatch)
	case *AttributeValueMemberM:
		return unmarshalMap(a.Value, v, mismatch)
	}
	return mismatch()
}

func unmarshalNumber(n string, v reflect.Value, mismatch func() error) error {
	switch v.Kind() {
	case reflect.String:
		v.SetString(n)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i, err := strconv.ParseInt(n, 10, 64)
		if err != nil || v.OverflowInt(i) {
			return fmt.Errorf("ddb: number %s does not fit a %v", n, v.Type())
		}
		v.SetInt(i)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		u, err := strconv.ParseUint(n, 10, 64)
		if err != nil || v.OverflowUint(u) {
			return fmt.Errorf("ddb: number %s does not fit a %v", n, v.Type())
		}
		v.SetUint(u)
	case reflect.Float32, reflect.Float64:
		f, err := strconv.ParseFloat(n, 64)
		if err != nil || v.OverflowFloat(f) {
			return fmt.Errorf("ddb: number %s does not fit a %v", n, v.Type())
		}
		v.SetFloat(f)
	case reflect.Interface:
		f, err := strconv.ParseFloat(n, 64) // as attributevalue: a float64
		if err != nil || v.NumMethod() != 0 {
			return mismatch()
		}
		v.Set(reflect.ValueOf(f))
	default:
		return mismatch()
	}
	return nil
}

func unmarshalList(l []AttributeValue, v reflect.Value, mismatch func() error) error {
	switch v.Kind() {
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), len(l), len(l))
		for i, e := range l {
			if err := unmarshal(e, s.Index(i)); err != nil {
				return err
			}
		}
		v.Set(s)
	case reflect.Array:
		if len(l) > v.Len() {
			return mismatch()
		}
		for i, e := range l {
			if err := unmarshal(e, v.Index(i)); err != nil {
				return err
			}
		}
	case reflect.Interface:
		if v.NumMethod() != 0 {
			return mismatch()
		}
		var s []any
		if err := unmarshalList(l, reflect.ValueOf(&s).Elem(), mismatch); err != nil {
			return err
		}
		v.Set(reflect.ValueOf(s))
	default:
		return mismatch()
	}
	return nil
}

func unmarshalMap(m map[string]AttributeValue, v reflect.Value, mismatch func() error) error {
	switch v.Kind() {
	case reflect.Struct:
		fields := fieldsOf(v.Type())
		for k, e := range m {
			f, ok := fieldNamed(fields, k)
			if !ok {
				continue // attributes the struct does not know are skipped
			}
			fv := fieldForSet(v, f.index)
			if err := unmarshal(e, fv); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
		}
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			return mismatch()
		}
		if v.IsNil() {
			v.Set(reflect.MakeMapWithSize(v.Type(), len(m)))
		}
		for k, e := range m {
			ev := reflect.New(v.Type().Elem()).Elem()
			if err := unmarshal(e, ev); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
			v.SetMapIndex(reflect.ValueOf(k).Convert(v.Type().Key()), ev)
		}
	case reflect.Interface:
		if v.NumMethod() != 0 {
			return mismatch()
		}
		var out map[string]any
		if err := unmarshalMap(m, reflect.ValueOf(&out).Elem(), mismatch); err != nil {
			return err
		}
		v.Set(reflect.ValueOf(out))
	default:
		return mismatch()
	}
	return nil
}

var timeType = reflect.TypeFor[time.Time]()

// field is one attribute of a struct: its name, where it is (through
// embedded structs) and whether a zero value is left out.
type field struct {
	name      string
	index     []int
	omitEmpty bool
}

var fieldCache sync.Map // reflect.Type → []field

// fieldsOf lists t's attributes, embedded structs' fields flattened; a name
// given at a shallower depth wins, as in attributevalue and encoding/json.
func fieldsOf(t reflect.Type) []field {
	if f, ok := fieldCache.Load(t); ok {
		return f.([]field)
	}
	var out []field
	seen := map[string]bool{}
	var walk func(t reflect.Type, index []int)
	level := []func(){}
	walk = func(t reflect.Type, index []int) {
		for i := range t.NumField() {
			sf := t.Field(i)
			tag := sf.Tag.Get("dynamodbav")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			idx := append(append([]int(nil), index...), i)
			ft := sf.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if sf.Anonymous && name == "" && ft.Kind() == reflect.Struct {
				level = append(level, func() { walk(ft, idx) })
				continue
			}
			if !sf.IsExported() {
				continue
			}
			if name == "" {
				name = sf.Name
			}
			if seen[name] {
				continue
			}
			seen[name] = true
			out = append(out, field{name: name, index: idx, omitEmpty: strings.Contains(","+opts+",", ",omitempty,")})
		}
	}
	walk(t, nil)
	for len(level) > 0 {
		next := level
		level = nil
		for _, f := range next {
			f()
		}
	}
	fieldCache.Store(t, out)
	return out
}

// fieldNamed finds the field of an attribute: the exact name, else one
// equal under case folding (as attributevalue reads).
func fieldNamed(fields []field, name string) (field, bool) {
	for _, f := range fields {
		if f.name == name {
			return f, true
		}
	}
	for _, f := range fields {
		if strings.EqualFold(f.name, name) {
			return f, true
		}
	}
	return field{}, false
}

// fieldByIndex reads a (possibly embedded) field; false when an embedded
// pointer on the way is nil.
func fieldByIndex(v reflect.Value, index []int) (reflect.Value, bool) {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, true
}

// fieldForSet is the field to decode into, allocating embedded pointers.
func fieldForSet(v reflect.Value, index []int) reflect.Value {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v
}

func isZero(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Invalid:
		return true
	case reflect.Map, reflect.Slice, reflect.Pointer, reflect.Interface:
		return v.IsNil()
	case reflect.Array:
		return v.Len() == 0
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return v.IsZero()
	}
	return false // a struct is never left out
}

// nullable says whether a zero v is written as NULL (else as its zero).
func nullable(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Invalid, reflect.Map, reflect.Slice, reflect.Pointer, reflect.Interface:
		return true
	}
	return false
}
