package config

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// maxDecodeSteps bounds the work the decoder does, so that aliases and merge
// keys (which may repeat a node many times) cannot blow a small file up
// into an enormous configuration.
const maxDecodeSteps = 200_000

// decoder fills Go values from a yaml.Node tree, strictly: unknown keys,
// duplicate keys and wrongly typed values become problems, never silent
// zero values. It records the line of every field path it sees so that
// later validation can point at the right line.
type decoder struct {
	problems *problems
	lines    map[string]int
	steps    int
	stopped  bool
}

func (d *decoder) step(n *yaml.Node, path string) bool {
	if d.stopped {
		return false
	}
	d.steps++
	if d.steps > maxDecodeSteps {
		d.stopped = true
		d.shape(n.Line, path, "the file expands to too many values (aliases or merge keys repeat too much)",
			"write the values out or use fewer aliases")
		return false
	}
	return true
}

// shape records a problem with the file's structure.
func (d *decoder) shape(line int, field, what, fix string) {
	d.problems.add(line, field, what, fix)
	d.problems.shapeFields[field] = true
}

func (d *decoder) setLine(path string, line int) {
	if _, ok := d.lines[path]; !ok {
		d.lines[path] = line
	}
}

// resolve follows aliases.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// decode fills v (addressable) from n. path names v in messages.
func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string) {
	n = resolve(n)
	if n == nil || !d.step(n, path) {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		// A present key enables a block, even when its value is empty.
		if v.IsNil() {
			v.Set(newValue(v.Type().Elem()))
		}
		if isNull(n) {
			return
		}
		d.decode(n, v.Elem(), path)
		return
	}
	if isNull(n) {
		return // same as an absent key: the default stays
	}
	switch v.Kind() {
	case reflect.Struct:
		d.decodeStruct(n, v, path)
	case reflect.Slice:
		d.decodeSlice(n, v, path)
	case reflect.Map:
		d.decodeMap(n, v, path)
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			d.shape(n.Line, path, "expected a text value, got "+describe(n), "write a single value")
			return
		}
		v.SetString(n.Value)
	case reflect.Bool:
		var b bool
		if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" || n.Decode(&b) != nil {
			d.shape(n.Line, path, "expected true or false, got "+describe(n), "write true or false")
			return
		}
		v.SetBool(b)
	case reflect.Int:
		var i int
		if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || n.Decode(&i) != nil {
			d.shape(n.Line, path, "expected a whole number, got "+describe(n), numberFix(n))
			return
		}
		v.SetInt(int64(i))
	case reflect.Float64:
		var f float64
		if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") || n.Decode(&f) != nil {
			d.shape(n.Line, path, "expected a number, got "+describe(n), numberFix(n))
			return
		}
		v.SetFloat(f)
	default:
		panic("config: decoder does not handle " + v.Type().String())
	}
}

func numberFix(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		if _, err := strconv.ParseFloat(strings.TrimSpace(n.Value), 64); err == nil {
			return "write the number without quotes"
		}
	}
	return "write a number such as 25"
}

// describe names what a node holds, for messages. Scalar text is quoted and
// capped: it may be a mistyped secret, so it is never echoed at length.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping (key: value pairs)"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return "nothing"
		case "!!str":
			return "the text " + strconv.Quote(shorten(n.Value))
		default:
			return strconv.Quote(shorten(n.Value))
		}
	}
	return "an unexpected value"
}

// newValue allocates a *T with its defaults applied.
func newValue(t reflect.Type) reflect.Value {
	p := reflect.New(t)
	if df, ok := p.Interface().(defaulter); ok {
		df.setDefaults()
	}
	return p
}

type pair struct{ key, value *yaml.Node }

// pairs returns the key/value pairs of mapping n, with merge keys ("<<")
// expanded: explicit keys win over merged ones, earlier merge sources win
// over later ones, as in YAML 1.1. Duplicate explicit keys are problems.
func (d *decoder) pairs(n *yaml.Node, path string, seen map[*yaml.Node]bool) []pair {
	var explicit []pair
	var sources []*yaml.Node
	where := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
			v = resolve(v)
			switch {
			case v == nil:
			case v.Kind == yaml.MappingNode:
				sources = append(sources, v)
			case v.Kind == yaml.SequenceNode:
				for _, s := range v.Content {
					if s = resolve(s); s != nil && s.Kind == yaml.MappingNode {
						sources = append(sources, s)
					} else if s != nil {
						d.shape(s.Line, path, "a merge key (<<) can only merge mappings, got "+describe(s), "merge an anchored mapping such as <<: *defaults")
					}
				}
			default:
				d.shape(v.Line, path, "a merge key (<<) can only merge mappings, got "+describe(v), "merge an anchored mapping such as <<: *defaults")
			}
			continue
		}
		if k.Kind != yaml.ScalarNode {
			d.shape(k.Line, path, "a key must be a plain name, got "+describe(k), "write name: value")
			continue
		}
		if first, dup := where[k.Value]; dup {
			d.shape(k.Line, fieldPath(path, shorten(k.Value)), fmt.Sprintf("appears twice (first at line %d)", first), "keep only one of them")
			continue
		}
		where[k.Value] = k.Line
		explicit = append(explicit, pair{k, v})
	}
	out := explicit
	for _, src := range sources {
		if seen[src] || !d.step(src, path) {
			continue
		}
		seen[src] = true
		for _, p := range d.pairs(src, path, seen) {
			if _, ok := where[p.key.Value]; !ok {
				where[p.key.Value] = p.key.Line
				out = append(out, p)
			}
		}
	}
	return out
}

func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.shape(n.Line, path, "expected a mapping (key: value pairs), got "+describe(n), "write the keys of this block indented below it")
		return
	}
	t := v.Type()
	fields := map[string]int{}
	var known []string
	for i := range t.NumField() {
		if name := yamlName(t.Field(i)); name != "" {
			fields[name] = i
			known = append(known, name)
		}
	}
	for _, p := range d.pairs(n, path, map[*yaml.Node]bool{}) {
		name := p.key.Value
		i, ok := fields[name]
		if !ok {
			d.shape(p.key.Line, fieldPath(path, shorten(name)), "unknown key", unknownKeyFix(name, known))
			if s, ok := closest(name, known); ok {
				d.problems.suggested[fieldPath(path, s)] = true
			}
			continue
		}
		fp := fieldPath(path, name)
		d.setLine(fp, p.key.Line)
		d.decode(p.value, v.Field(i), fp)
	}
}

func (d *decoder) decodeSlice(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.SequenceNode {
		fix := "write a list such as [a, b] or one \"- item\" per line"
		d.shape(n.Line, path, "expected a list, got "+describe(n), fix)
		return
	}
	s := reflect.MakeSlice(v.Type(), 0, len(n.Content))
	for i, item := range n.Content {
		if d.stopped {
			break
		}
		ip := indexPath(path, i)
		d.setLine(ip, item.Line)
		e := newValue(v.Type().Elem()).Elem()
		d.decode(item, e, ip)
		s = reflect.Append(s, e)
	}
	v.Set(s)
}

func (d *decoder) decodeMap(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.shape(n.Line, path, "expected a mapping (key: value pairs), got "+describe(n), "write one \"key: value\" per line")
		return
	}
	m := reflect.MakeMap(v.Type())
	for _, p := range d.pairs(n, path, map[*yaml.Node]bool{}) {
		kp := mapPath(path, p.key.Value)
		d.setLine(kp, p.key.Line)
		e := newValue(v.Type().Elem()).Elem()
		d.decode(p.value, e, kp)
		m.SetMapIndex(reflect.ValueOf(p.key.Value), e)
	}
	v.Set(m)
}

// yamlName is the YAML key of a struct field, "" for fields without one.
func yamlName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if name == "-" {
		return ""
	}
	return name
}

// shorten caps text quoted back in messages.
func shorten(s string) string {
	if r := []rune(s); len(r) > 40 {
		return string(r[:40]) + "…"
	}
	return s
}

func fieldPath(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

func indexPath(parent string, i int) string { return parent + "[" + strconv.Itoa(i) + "]" }

func mapPath(parent, key string) string { return parent + "[" + strconv.Quote(key) + "]" }

// parentPath strips the last segment of a field path: a.b → a, a[2] → a,
// a["x.y"] → a.
func parentPath(p string) string {
	if strings.HasSuffix(p, "\"]") {
		if i := strings.LastIndex(p, "[\""); i >= 0 {
			return p[:i]
		}
	}
	if strings.HasSuffix(p, "]") {
		if i := strings.LastIndex(p, "["); i >= 0 {
			return p[:i]
		}
	}
	if i := strings.LastIndex(p, "."); i >= 0 {
		return p[:i]
	}
	return ""
}

// unknownKeyFix suggests the closest known key, or lists them all.
func unknownKeyFix(name string, known []string) string {
	if s, ok := closest(name, known); ok {
		return fmt.Sprintf("did you mean %q?", s)
	}
	k := slices.Clone(known)
	slices.Sort(k)
	return "remove it; the keys allowed here are " + strings.Join(k, ", ")
}

// closest returns the known key nearest to name by edit distance (case
// differences count little), if it is near enough to be a likely typo.
func closest(name string, known []string) (string, bool) {
	if len(name) > 64 {
		return "", false // no key is that long; spare the quadratic distance
	}
	best, bestD := "", -1
	for _, k := range known {
		// Compared case-insensitively: "baseURL" for "baseUrl" is the most
		// likely typo of all.
		dist := editDistance(strings.ToLower(name), strings.ToLower(k))
		if bestD < 0 || dist < bestD {
			best, bestD = k, dist
		}
	}
	limit := max(2, len([]rune(name))/3)
	return best, bestD >= 0 && bestD <= limit
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
