package devrt

import (
	"errors"
	"os"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	swcfg "github.com/switchboard-dev/switchboard/shared/platform/config"
)

// ConfigError points a config error at the user's own file: with the
// sandbox on, the App loads the sandbox's copy of it (rewritten at every
// start, with other line numbers), but the fix belongs in the user's file.
// Each problem is moved to the line of its field there, or of the field's
// nearest written parent when the sandbox added the field. Other errors
// pass unchanged.
func (e *Env) ConfigError(err error) error {
	if e == nil {
		return err
	}
	return CopyError(err, e.userConfig, e.configCopy)
}

// CopyError is ConfigError for a config error in copyFile, the sandbox's
// copy of userFile ("" copyFile: err unchanged).
func CopyError(err error, userFile, copyFile string) error {
	var ce *swcfg.Error
	if copyFile == "" || !errors.As(err, &ce) || ce.File != copyFile {
		return err
	}
	data, rerr := os.ReadFile(userFile)
	var root yaml.Node
	if rerr != nil || yaml.Unmarshal(data, &root) != nil {
		return err
	}
	out := &swcfg.Error{File: userFile}
	for _, p := range ce.Problems {
		if p.File == copyFile {
			p.File = userFile
			p.Line = lineOf(&root, p.Field)
		}
		out.Problems = append(out.Problems, p)
	}
	return out
}

// lineOf is the line of field (a path such as agents[0].tools.Nextcloud or
// instance.mcp.clients[1].token) in the YAML document root, or of its
// nearest written parent; 1 when not even the first step is written.
func lineOf(root *yaml.Node, field string) int {
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line := 1
	for _, step := range pathSteps(field) {
		next, at := childOf(n, step)
		if next == nil {
			break
		}
		n, line = next, at
	}
	return line
}

// childOf is the value under step (a key, or "[i]" for a sequence item)
// and the line where it is written (for a key: the key's line).
func childOf(n *yaml.Node, step string) (*yaml.Node, int) {
	if i, ok := strings.CutPrefix(step, "["); ok {
		idx, err := strconv.Atoi(strings.TrimSuffix(i, "]"))
		if err != nil || n.Kind != yaml.SequenceNode || idx < 0 || idx >= len(n.Content) {
			return nil, 0
		}
		return n.Content[idx], n.Content[idx].Line
	}
	if n.Kind != yaml.MappingNode {
		return nil, 0
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == step {
			return n.Content[i+1], n.Content[i].Line
		}
	}
	return nil, 0
}

// pathSteps splits a field path: `agents[0].tools["x.y"].a` →
// agents, [0], tools, x.y, a.
func pathSteps(field string) []string {
	var steps []string
	for field != "" {
		switch {
		case strings.HasPrefix(field, `["`):
			end := strings.Index(field, `"]`)
			if end < 0 {
				return append(steps, field[2:])
			}
			steps, field = append(steps, field[2:end]), field[end+2:]
		case field[0] == '[':
			end := strings.IndexByte(field, ']')
			if end < 0 {
				return append(steps, field)
			}
			steps, field = append(steps, field[:end+1]), field[end+1:]
		case field[0] == '.':
			field = field[1:]
		default:
			end := strings.IndexAny(field, ".[")
			if end < 0 {
				end = len(field)
			}
			steps, field = append(steps, field[:end]), field[end:]
		}
	}
	return steps
}
