// Package untrusted frames text that others wrote — chat messages, file
// names, link previews, share notes, another agent's messages — before it
// reaches a model. Frame wraps it as
//
//	<untrusted_content source="…" nonce="N">
//	…
//	</untrusted_content nonce="N">
//
// with a fresh random nonce that does not occur in the text, and neutralises
// anything inside that looks like an opening or closing untrusted_content tag
// (also spelt with entities, escapes, fullwidth or invisible characters), so
// the only closing tag carrying the nonce is the real one at the end.
// Instructions is the matching sentence for system prompts; Parse reverses
// Frame and proves a frame unambiguous. The package uses only the standard
// library.
package untrusted
