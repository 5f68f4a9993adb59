package tools

// CheckArgs compiles params as the executor does and checks args against
// it, for the tests that compare the check with a JSON Schema library.
func CheckArgs(name string, params map[string]any, args []byte) (problems []string, valid bool, err error) {
	n, err := compile(name, params)
	if err != nil {
		return nil, false, err
	}
	v, ok := parseArgs(args)
	if !ok {
		return nil, false, nil
	}
	n.check(v, "", &problems)
	return problems, true, nil
}
