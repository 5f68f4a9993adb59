package tgfake

// SetFirstIDs makes the next update and message ids start at update and
// message (both > 0). Tests keep the defaults so that ids repeat from run
// to run; a server whose receiver remembers update ids across restarts
// (the dev sandbox: Switchboard claims each update id in DynamoDB) needs
// ids that do not.
func (s *Server) SetFirstIDs(update, message int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if update > 0 {
		s.nextUpdate = update
	}
	if message > 0 {
		s.nextMsg = message
	}
}
