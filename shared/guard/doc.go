// Package guard holds the repository's guard rails as tests (STYLE habit 10):
// the domain imports no AWS SDK and no net/http, functions never import CDK,
// every package has one doc comment, functions, the deploy catalogue and the
// handlers agree, and `make help` lists the documented targets. It has no
// code of its own.
package guard
