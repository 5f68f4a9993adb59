// Package fuzztest helps fuzz targets reach the inputs that matter: the
// fuzzer's bytes choose which known-dangerous fragments go where, instead
// of hoping that random bytes spell them. Tests only.
package fuzztest

// Splice inserts fragments into text as plan says: each pair of bytes
// picks a fragment and a relative position (at most 16 insertions).
func Splice(text string, plan []byte, fragments []string) string {
	for i := 0; i+1 < len(plan) && i < 32; i += 2 {
		frag := fragments[int(plan[i])%len(fragments)]
		pos := int(plan[i+1]) * (len(text) + 1) / 256
		text = text[:pos] + frag + text[pos:]
	}
	return text
}
