package feed

import "time"

// SetClock replaces s's clock, for tests of expiry.
func SetClock(s *Service, now func() time.Time) { s.now = now }
