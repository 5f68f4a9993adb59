package switchboard

import (
	"fmt"
	"strings"
)

// A tool action is offered to a model under one function name,
// "<Tool>__<action>", and read back from it. The OpenAI-compatible and the
// Bedrock providers share these functions, so both offer and parse the same
// names.
//
// Both APIs accept the same alphabet for these names:
//   - OpenAI chat completions, function.name: "Must be a-z, A-Z, 0-9, or
//     contain underscores and dashes, with a maximum length of 64."
//   - Bedrock Converse, ToolSpecification.name: length 1–64, pattern
//     [a-zA-Z0-9_-]+ (API reference, API_runtime_ToolSpecification).
//
// Neither allows a dot, so "Tool.action" (how the rest of Switchboard writes
// a call) cannot be used; the double underscore is the separator instead.

// FunctionNameSeparator joins tool and action in a function name.
const FunctionNameSeparator = "__"

// MaxFunctionName is the longest function name both APIs accept.
const MaxFunctionName = 64

// validFunctionName tells whether name is 1–64 characters of a-z, A-Z, 0-9, _ and -.
// A loop, not a regular expression: {1,64} compiles into 64 copies of the
// character class at every cold start.
func validFunctionName(name string) bool {
	if len(name) < 1 || len(name) > MaxFunctionName {
		return false
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// FunctionName is the name under which the action of tool is offered to a
// model. CheckFunctionName tells whether the providers' APIs accept it.
func FunctionName(tool, action string) string { return tool + FunctionNameSeparator + action }

// SplitFunctionName is the inverse of FunctionName: it cuts name at the first
// separator. ok is false when name has no separator or either side is empty,
// i.e. when a model made the name up.
func SplitFunctionName(name string) (tool, action string, ok bool) {
	tool, action, ok = strings.Cut(name, FunctionNameSeparator)
	if !ok || tool == "" || action == "" {
		return "", "", false
	}
	return tool, action, true
}

// CheckFunctionName reports why the action of tool cannot be offered to a model, or nil.
// Beyond the APIs' alphabet and length, the name must split back into the
// same tool and action: a tool name may not contain "__" nor end in "_"
// ("A_" + "__" + "b" would read back as "A" and "_b").
func CheckFunctionName(tool, action string) error {
	name := FunctionName(tool, action)
	switch {
	case tool == "" || action == "":
		return fmt.Errorf("tool %q action %q: tool and action names must not be empty", tool, action)
	case !validFunctionName(name):
		if len(name) > MaxFunctionName {
			return fmt.Errorf("function name %q is %d characters; models accept at most %d (shorten the tool or action name)", name, len(name), MaxFunctionName)
		}
		return fmt.Errorf("function name %q may contain only letters, digits, '_' and '-'", name)
	}
	if t, a, ok := SplitFunctionName(name); !ok || t != tool || a != action {
		return fmt.Errorf("function name %q would not read back as tool %q action %q; a tool name must not contain %q nor end in '_'", name, tool, action, FunctionNameSeparator)
	}
	return nil
}

// ParseFunctionName reads the function name a model called. A name SplitFunctionName
// cannot decode is passed through whole as the tool, with no action, so the
// executor rejects the call with its own clear answer ("unknown tool …")
// instead of the provider failing the run.
func ParseFunctionName(name string) (tool, action string) {
	if tool, action, ok := SplitFunctionName(name); ok {
		return tool, action
	}
	return name, ""
}

// CalledFunctionName is the name to replay in a conversation history for a
// call that ParseFunctionName read: FunctionName, or the model's own name when it was passed
// through. Characters the APIs refuse become '_' and the name is cut at
// MaxFunctionName: one made-up name in the history must not make every later request
// of the run fail validation.
func CalledFunctionName(tool, action string) string {
	name := tool
	if action != "" {
		name = FunctionName(tool, action)
	}
	if validFunctionName(name) {
		return name
	}
	b := []byte(name)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	if len(b) > MaxFunctionName {
		b = b[:MaxFunctionName]
	}
	if len(b) == 0 {
		return "unknown"
	}
	return string(b)
}

// FunctionDescription is what a model reads about one function: the tool's
// description, then the action's (either may be empty).
func FunctionDescription(toolDescription, actionDescription string) string {
	switch {
	case toolDescription == "":
		return actionDescription
	case actionDescription == "":
		return toolDescription
	}
	return toolDescription + "\n" + actionDescription
}
