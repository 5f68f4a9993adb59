package config

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"sync"

	"go.yaml.in/yaml/v3"
)

// MaxFileBytes caps the size of a configuration file.
const MaxFileBytes = 1 << 20

const copyHint = "copy switchboard.example.yaml from the repository to this path (or point SWITCHBOARD_CONFIG at a config file) and edit it"

// Load reads, validates and resolves the configuration file at path. A nil
// resolver means EnvResolver{}. Every problem is reported at once in an
// *Error; nothing is half-loaded.
func Load(ctx context.Context, path string, r SecretResolver) (*Config, error) {
	if path == "" {
		return nil, &Error{File: "(no file)", Problems: []Problem{{File: "(no file)",
			What: "no configuration file given", Fix: "set SWITCHBOARD_CONFIG or pass --config; to start, " + copyHint}}}
	}
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(ctx, path, data, r)
}

// readFile reads the configuration file at path (not empty) for Load and
// Check, explaining a missing file, a directory or an unreadable one.
func readFile(path string) ([]byte, error) {
	fail := func(what, fix string) error {
		return &Error{File: path, Problems: []Problem{{File: path, What: what, Fix: fix}}}
	}
	f, err := os.Open(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fail("the configuration file does not exist", copyHint)
	case err != nil:
		return nil, fail(fmt.Sprintf("cannot open the configuration file: %v", err), "check the path and its permissions")
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return nil, fail("is a directory, not a configuration file", "name the YAML file itself, e.g. "+path+"/switchboard.yaml")
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fail(fmt.Sprintf("cannot read the configuration file: %v", err), "check the file and its permissions")
	}
	return data, nil
}

// Parse validates and resolves a configuration held in memory; file names
// it in messages. A nil resolver means EnvResolver{}.
func Parse(ctx context.Context, file string, data []byte, r SecretResolver) (*Config, error) {
	return parse(ctx, file, data, r, "")
}

// parse is Parse; with a target it checks instead of resolving (see Check).
func parse(ctx context.Context, file string, data []byte, r SecretResolver, target Target) (*Config, error) {
	if file == "" {
		file = "(config)"
	}
	if r == nil {
		r = EnvResolver{}
	}
	ps := newProblems(file)
	fail := func(line int, what, fix string) (*Config, error) {
		ps.add(line, "", what, fix)
		return nil, ps.err()
	}
	if len(data) > MaxFileBytes {
		return fail(0, fmt.Sprintf("the file is larger than %d bytes", MaxFileBytes), "a configuration is a few kilobytes; check that this is the right file")
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return fail(0, "the configuration file is empty", copyHint)
	}
	root, err := parseYAML(data)
	if err != nil {
		return fail(syntaxLine(err), "not valid YAML: "+syntaxMessage(err), "fix the syntax (indent with spaces, not tabs; quote values that contain \": \" or start with a special character)")
	}
	if root == nil {
		return fail(0, "the configuration file holds only comments", copyHint)
	}
	if root.Kind != yaml.MappingNode {
		return fail(root.Line, "the top level must be a mapping with instance: and agents:", copyHint)
	}

	c := &Config{}
	c.setDefaults()
	d := &decoder{problems: ps, lines: ps.lines}
	d.decode(root, reflect.ValueOf(c).Elem(), "")
	c.File = file
	if d.stopped {
		return nil, ps.err() // the values are a fragment; checking them says nothing
	}
	normalize(c)
	validate(c, ps) // also after shape problems: the user sees everything at once
	if target != "" {
		return checkUnresolved(c, ps, target)
	}
	if len(ps.list) > 0 {
		// No secret is fetched for a configuration that cannot run.
		return nil, ps.err()
	}
	resolveSecrets(ctx, c, r, ps)
	validateResolved(c, ps)
	if err := ps.err(); err != nil {
		return nil, err
	}
	return c, nil
}

// parseYAML returns the single document's root node, nil for a document
// without content. The parser is third-party code fed with user input, so a
// panic in it is turned into an error rather than a crash.
func parseYAML(data []byte) (root *yaml.Node, err error) {
	defer func() {
		if p := recover(); p != nil {
			root, err = nil, fmt.Errorf("yaml: the parser failed on this input (%v)", p)
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, err
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, err
	default:
		return nil, fmt.Errorf("yaml: line %d: a second document starts here (---); keep instance: and agents: in one document", max(next.Line, 1))
	}
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		return doc.Content[0], nil
	}
	return nil, nil
}

var lineRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`line (\d+)`) }) // only for a broken config

func syntaxLine(err error) int {
	if m := lineRe().FindStringSubmatch(err.Error()); m != nil {
		if l, e := strconv.Atoi(m[1]); e == nil {
			return l
		}
	}
	return 0
}

var yamlPrefixRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^yaml: (line \d+: )?`) })

func syntaxMessage(err error) string { return yamlPrefixRe().ReplaceAllString(err.Error(), "") }
