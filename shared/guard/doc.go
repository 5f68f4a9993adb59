// Package guard holds the repository's guard rails as tests: the layers of
// shared/ import only inward (the domain only the standard library, adapters
// no use case, nothing the wiring), fakes stay in tests and out of every
// Lambda binary, the domain imports no AWS SDK and no net/http, functions
// never import CDK, every package has one doc comment, functions, the deploy
// catalogue and the handlers agree, comments and docs cite no document
// outside the repository, `make help` lists the documented targets, and
// tests wait for events instead of sleeping. It has no code of its own.
package guard
