package egress

import "net/url"

// RedactURL is an endpoint URL as logs, audit rows and Temporal history may show it: without the
// user info, query and fragment, where receivers put tokens. Deliveries read the full URL from the
// database when they send.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	u.RawQuery, u.Fragment, u.User = "", "", nil
	return u.String()
}
