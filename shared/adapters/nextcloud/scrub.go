package nextcloud

import "github.com/switchboard-dev/switchboard/shared/platform/scrub"

// Option changes how New builds a Client.
type Option func(*Client)

// WithScrubber makes s (plus the client's app password) the Scrubber that
// share notes and labels pass before they leave: Nextcloud mails the note to
// the recipient. Without it the client masks the well-known secret shapes
// and its own app password only; production clients get the instance's
// Scrubber, which a test of the module checks for every client built
// outside tests. File contents are the user's data and are never changed.
func WithScrubber(s *scrub.Scrubber) Option {
	return func(c *Client) { c.scrubber = s.With(c.password) }
}
